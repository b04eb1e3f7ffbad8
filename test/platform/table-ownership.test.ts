// A feature reaches another only through its service, and that holds for its tables too: every
// table has one owner (the folder of src/ whose repo writes it), and only the owner's files name it
// in SQL. Another feature asks the owner's service, passing its transaction when the read or the
// lock must be part of it (docs/design.md §12). dependency-cruiser sees imports, not SQL text, so
// this test reads every string and template literal of src/ for the tables it names.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** Each table (or schema, for the sandbox bank's and graphile-worker's) and the folder of src/ that owns it. */
const OWNERS: Readonly<Record<string, string>> = {
  partners: 'partners',
  partner_credentials: 'partners',
  ledger_accounts: 'ledger',
  ledger_transfers: 'ledger',
  ledger_pending_transfers: 'ledger',
  providers: 'banking',
  provider_calls: 'banking',
  partner_provider_routes: 'banking',
  provider_recipients: 'banking',
  provider_accounts: 'banking',
  sandbox_bank: 'sandbox',
  wallets: 'wallets',
  wallet_moves: 'wallets',
  bank_instructions: 'money-out',
  events: 'events',
  event_deliveries: 'events',
  event_delivery_attempts: 'events',
  disabled_callback_urls: 'events',
  outbound_transfers: 'money-out',
  outbound_transfer_states: 'money-out',
  counterparties: 'money-out',
  virtual_accounts: 'collections',
  payment_intents: 'collections',
  inbound_credits: 'collections',
  inbound_credit_sweep: 'collections',
  invoices: 'invoices',
  escrows: 'escrow',
  escrow_webhooks: 'escrow',
  escrow_funding_credits: 'escrow',
  // Dropped by migration 0057 (an escrow reads its refunds from refunds); 0031 still creates it.
  escrow_refunds: 'escrow',
  refunds: 'money-out',
  refund_requests: 'money-out',
  settlement_settings: 'settlement',
  settlements: 'settlement',
  settlement_queue: 'settlement',
  settlement_credits: 'settlement',
  sandbox_clocks: 'partners',
  dashboard_links: 'web',
  dashboard_sessions: 'web',
  dashboard_actions: 'web',
  // The platform's own: replay protection, the state machines' rows, worker liveness, the key check
  // and the job queue.
  idempotency_keys: 'platform',
  // Dropped by 0055 (replaced by idempotency_keys); its migration still creates it.
  signed_requests: 'platform',
  state_transitions: 'platform',
  worker_processes: 'platform',
  master_key_check: 'platform',
  graphile_worker: 'platform',
}

/** Where a file names a table it does not own, on purpose: each with why. Keep this short. */
const EXEMPTIONS: ReadonlyArray<{ file: string; tables: readonly string[]; reason: string }> = [
  {
    file: 'src/platform/observability/database-gauges.ts',
    tables: ['event_deliveries', 'bank_instructions', 'inbound_credits', 'providers', 'provider_calls'],
    reason:
      'scrape-time counts for Prometheus, read-only in their own transaction; a library imports no feature, and the gauges must stay up when a feature is wrong',
  },
]

/** A table named after a keyword of SQL that reads or writes it; the keywords are upper case, as every query in src/ writes them. */
const TABLE_REFERENCE =
  /\b(?:FROM|JOIN|UPDATE|INTO|TABLE)\s+(?:ONLY\s+)?"?([a-z_][a-z0-9_]*)"?(?:\.([a-z_][a-z0-9_]*))?/g

export interface Finding {
  file: string
  line: number
  table: string
  owner: string
}

/** The folder of src/ a file belongs to; the composition root (src/*.ts) is '' and may name any table. */
function folderOf(file: string): string {
  const parts = file.split('/')
  return parts.length > 2 ? parts[1]! : ''
}

/** The text of every string and template literal of a source, with its line; a substitution reads as a space. */
function literals(file: string, source: string): { text: string; line: number }[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: { text: string; line: number }[] = []
  const visit = (node: ts.Node) => {
    const line = () => sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
      found.push({ text: node.text, line: line() })
    else if (ts.isTemplateExpression(node))
      found.push({
        text: [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' '),
        line: line(),
      })
    ts.forEachChild(node, visit)
  }
  visit(sourceFile)
  return found
}

/** The tables a file names in SQL that another folder owns, less the exemptions. */
export function crossings(file: string, source: string): Finding[] {
  const folder = folderOf(file)
  if (folder === '') return []
  const findings: Finding[] = []
  for (const { text, line } of literals(file, source)) {
    for (const match of text.matchAll(TABLE_REFERENCE)) {
      // A schema-qualified name is owned by its schema's owner (sandbox_bank.accounts, graphile_worker.jobs).
      const table = match[1]!
      const owner = OWNERS[table]
      if (owner === undefined || owner === folder) continue
      if (EXEMPTIONS.some((exemption) => exemption.file === file && exemption.tables.includes(table))) continue
      findings.push({
        file,
        line: line + text.slice(0, match.index).split('\n').length - 1,
        table: match[2] ? `${table}.${match[2]}` : table,
        owner,
      })
    }
  }
  return findings
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full) : [full]
  })
}

const sources = filesUnder(path.join(ROOT, 'src'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => path.relative(ROOT, file).split(path.sep).join('/'))

describe('a feature names only its own tables in SQL', () => {
  it('no file of src/ names a table another folder owns', () => {
    expect(sources.length).toBeGreaterThan(100)
    const findings = sources.flatMap((file) => crossings(file, readFileSync(path.join(ROOT, file), 'utf8')))
    expect(findings.map((f) => `${f.file}:${f.line} names ${f.table}, owned by src/${f.owner}/`)).toEqual([])
  })

  it('every table the migrations create has an owner, and every owner is a folder of src/', () => {
    const created = filesUnder(path.join(ROOT, 'db', 'migrations')).flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi,
        ),
      ].map((match) => match[1]!.toLowerCase()),
    )
    expect(created.length).toBeGreaterThan(30)
    expect(created.filter((table) => OWNERS[table] === undefined)).toEqual([])
    const folders = new Set(
      readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name),
    )
    expect(Object.values(OWNERS).filter((owner) => !folders.has(owner))).toEqual([])
  })

  it('every exemption still names a table its file reads, with a reason', () => {
    for (const exemption of EXEMPTIONS) {
      expect(exemption.reason.length).toBeGreaterThan(20)
      const source = readFileSync(path.join(ROOT, exemption.file), 'utf8')
      for (const table of exemption.tables)
        expect(source, `${exemption.file} no longer names ${table}: drop the exemption`).toMatch(
          new RegExp(`\\b${table}\\b`),
        )
    }
  })

  it('the check itself finds a crossing, and only in SQL text', () => {
    const offending = [
      '// Comments are not SQL: FROM wallets is not read.',
      'export async function refundable(db: Queryable, id: string) {',
      '  return db.query(`SELECT c.amount_kobo FROM inbound_credits c',
      '    JOIN virtual_accounts va ON va.id = c.virtual_account_id WHERE c.id = $1 FOR UPDATE`, [id])',
      '}',
      "const jobs = 'SELECT count(*) FROM graphile_worker.jobs'",
    ].join('\n')
    expect(crossings('src/money-out/refunds/repo.ts', offending)).toEqual([
      { file: 'src/money-out/refunds/repo.ts', line: 3, table: 'inbound_credits', owner: 'collections' },
      { file: 'src/money-out/refunds/repo.ts', line: 4, table: 'virtual_accounts', owner: 'collections' },
      { file: 'src/money-out/refunds/repo.ts', line: 6, table: 'graphile_worker.jobs', owner: 'platform' },
    ])
    expect(
      crossings('src/money-out/refunds/repo.ts', 'const sql = `UPDATE refunds SET state = $2 WHERE id = $1`'),
    ).toEqual([])
    expect(
      crossings('src/collections/credits/repo.ts', 'const sql = `SELECT * FROM inbound_credits WHERE id = ${id}`'),
    ).toEqual([])
  })
})
