// One write path: only src/ledger/ writes the ledger's tables or calls its functions, and in SQL
// only the ledger's own migrations do. A write anywhere else fails this test.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..')
const LEDGER_TABLE_WRITE =
  /\b(insert\s+into|update|delete\s+from|truncate(\s+table)?)\s+(only\s+)?"?ledger_(accounts|transfers|pending_transfers)\b/i
const LEDGER_FUNCTION_CALL = /\bledger_(create_transfers?|create_transfer_or_raise|apply_batch)\s*\(/i
/** The migrations that define the ledger (its tables, its one write path, its guards) are named NNNN_ledger…. */
const LEDGER_MIGRATION = /^\d{4}_ledger[._]/

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(full) : [full]
  })
}

function offendingLines(files: string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) =>
        LEDGER_TABLE_WRITE.test(line) || LEDGER_FUNCTION_CALL.test(line)
          ? [`${path.relative(ROOT, file)}:${index + 1}: ${line.trim()}`]
          : [],
      ),
  )
}

it('no code outside src/ledger/ writes a ledger table or calls a ledger function', () => {
  const code = filesUnder(path.join(ROOT, 'src')).filter(
    (file) => file.endsWith('.ts') && !file.startsWith(path.join(ROOT, 'src', 'ledger') + path.sep),
  )
  expect(code.length).toBeGreaterThan(50)
  expect(offendingLines(code)).toEqual([])
})

it("no migration but the ledger's own writes a ledger table", () => {
  const migrations = filesUnder(path.join(ROOT, 'db', 'migrations')).filter(
    (file) => !LEDGER_MIGRATION.test(path.basename(file)),
  )
  expect(migrations.length).toBeGreaterThan(10)
  expect(offendingLines(migrations)).toEqual([])
})

it('the check itself finds a write', () => {
  expect(LEDGER_TABLE_WRITE.test(`await tx.query('UPDATE ledger_accounts SET credits_posted = 0')`)).toBe(true)
  expect(LEDGER_TABLE_WRITE.test('INSERT INTO ledger_transfers (id) VALUES ($1)')).toBe(true)
  expect(LEDGER_FUNCTION_CALL.test('SELECT ledger_create_transfers($1)')).toBe(true)
  expect(LEDGER_TABLE_WRITE.test('SELECT * FROM ledger_accounts')).toBe(false)
})
