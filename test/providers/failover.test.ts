// Routing failover end to end (issue 32): a partner routed through sandbox-paystack then
// sandbox-monnify pays out through Paystack while it answers; once Paystack's calls really go
// unanswered, new payouts go to Monnify, while what was given to Paystack stays with it for life and
// completes there, once. /metrics, `rail provider list` and the dashboard show the provider's health.
// And no provider secret — the sandbox dialects' derived keys, nor a file-held key added with
// `rail provider add` — appears in provider_calls, the logs, the CLI, the dashboard or /metrics.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { createMetricsRegistry } from '../../src/platform/metrics.ts'
import { createLogger } from '../../src/platform/observability/logger.ts'
import { ProviderRegistry } from '../../src/banking/providers/registry.ts'
import { getProvider } from '../../src/banking/providers/service.ts'
import { writeFaults } from '../../src/sandbox/faults.ts'
import {
  SANDBOX_PAYSTACK_PREFIX,
  sandboxMonnifyCredentials,
  sandboxPaystackSecretKey,
} from '../../src/sandbox/public.ts'
import { signedInSession, type DashboardSession } from '../dashboard/support.ts'
import { scrape, valueOf } from '../observability/support.ts'
import { runRail } from '../support/cli.ts'
import { PAYEE } from '../support/payments.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { outboundState, payOut, routedPartner, settlePayout } from './routed-support.ts'

const SECRET = `failover-${randomBytes(8).toString('hex')}`
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } }
/**
 * Unanswered calls made through Paystack's adapter alone. Far past the 10 a judgement needs: the
 * payouts Paystack is still given while a process's reading of its health is fresh (up to 5 s) add
 * answered calls, and Paystack must stay unhealthy through them.
 */
const UNANSWERED_CALLS = 300
const FAULTS_OFF = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }

let app: Rail
let hook: Receiver
/** Every line the API and the workers logged, at debug level. */
const logged: string[] = []
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logged.push(chunk.toString('utf8'))
    done()
  },
})

beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: SECRET,
    payments: SCHEDULE,
    observe: { logger: { level: 'debug', stream: logStream }, databaseGauges: true },
    workers: {
      concurrency: 8,
      events: { retryDelaysMs: [200] },
      log: (level, message) => logged.push(`${level} ${message}\n`),
      observe: { registry: createMetricsRegistry(), logger: createLogger('debug', logStream) },
    },
    receiver: true,
  })
  hook = app.receiver
})
afterAll(async () => {
  if (app) await writeFaults(app.db.pool, FAULTS_OFF).catch(() => {})
  await app?.close()
})

// ---- helpers --------------------------------------------------------------------------------

/** The provider routing gave the transfer when it was submitted (the instruction takes it over). */
async function routedTo(id: string): Promise<string> {
  return (await app.db.pool.query<{ provider: string }>(`SELECT provider FROM outbound_transfers WHERE id = $1`, [id]))
    .rows[0]!.provider
}

async function instructionOf(id: string): Promise<{ provider: string; state: string } | undefined> {
  return (
    await app.db.pool.query<{ provider: string; state: string }>(
      `SELECT provider, state FROM bank_instructions WHERE id = $1`,
      [id],
    )
  ).rows[0]
}

async function providersCalledFor(id: string): Promise<string[]> {
  return (
    await app.db.pool.query<{ provider: string }>(
      `SELECT DISTINCT provider FROM provider_calls WHERE reference = $1 ORDER BY provider`,
      [id],
    )
  ).rows.map((row) => row.provider)
}

function callbacksOf(type: string, objectId: string): number {
  return hook.requests.filter((request) => {
    const body = JSON.parse(request.rawBody) as { event?: string }
    return body.event === type && request.rawBody.includes(objectId)
  }).length
}

async function dashboardPage(session: DashboardSession, id: string): Promise<string> {
  const page = await fetch(`${app.baseUrl}/dashboard/transfers/${id}`, { headers: { cookie: session.cookie } })
  expect(page.status).toBe(200)
  return page.text()
}

/** The text of the element with this id (tags stripped), or undefined. */
function elementText(html: string, id: string): string | undefined {
  const match = new RegExp(`<dd id="${id}">(.*?)</dd>`, 's').exec(html)
  return match?.[1]!.replace(/<[^>]+>/g, '')
}

// ---- failover -------------------------------------------------------------------------------

describe("a partner routed payouts: ['sandbox-paystack', 'sandbox-monnify']", () => {
  let client: RailClient
  let partnerId: string
  /** Payouts routing gave Paystack: they stay with it whatever its health becomes. */
  const givenToPaystack: string[] = []
  /** The first payout routing gave Monnify once Paystack went unhealthy. */
  let failedOver = ''

  beforeAll(async () => {
    ;({ client, partnerId } = await routedPartner(app, hook, { payouts: ['sandbox-paystack', 'sandbox-monnify'] }))
  })

  it('sends a new payout to sandbox-paystack while it is healthy', async () => {
    const id = await payOut(client, 310_000)
    expect(await routedTo(id)).toBe('sandbox-paystack')
    await waitFor(
      async () => (await outboundState(client, id)) === 'submitted',
      30_000,
      'the payout submitted (in progress at Paystack)',
    )
    expect(await instructionOf(id)).toEqual({ provider: 'sandbox-paystack', state: 'sent' })
    givenToPaystack.push(id)
  })

  it('gives Paystack payouts whose send gets no answer: they stay in progress there', async () => {
    // Magic amounts, for these sends alone: 9098 is processed but its answer lost; 9097's first send is dropped unprocessed.
    for (const amountKobo of [329_098, 339_097]) {
      const id = await payOut(client, amountKobo)
      expect(await routedTo(id)).toBe('sandbox-paystack')
      givenToPaystack.push(id)
      const unansweredSend = `SELECT 1 FROM provider_calls WHERE reference = $1 AND provider = 'sandbox-paystack' AND operation = 'payout' AND outcome = 'unknown'`
      await waitFor(
        async () => (await app.db.pool.query(unansweredSend, [id])).rowCount! > 0,
        30_000,
        `the send of ${amountKobo} unanswered`,
      )
    }
  })

  it("once Paystack's calls go unanswered, sends a new payout to sandbox-monnify", async () => {
    const registry = new ProviderRegistry(app.db.pool, { sandboxBankUrl: () => app.baseUrl, sandboxBankSecret: SECRET })
    const paystack = await registry.adapterFor(await getProvider(app.db.pool, 'sandbox-paystack'))
    const monnifyCallsBefore = await callCount('sandbox-monnify')
    // The bank answers 500 to everything, in both dialects: only Paystack is asked meanwhile.
    await writeFaults(app.db.pool, { ...FAULTS_OFF, errorRate: 1 })
    try {
      for (let batch = 0; batch < UNANSWERED_CALLS / 20; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, () =>
            paystack.nameEnquiry({ bankCode: PAYEE.bankCode, accountNumber: PAYEE.accountNumber }),
          ),
        )
        expect(answers.map((answer) => answer.outcome)).toEqual(Array(20).fill('unknown'))
      }
    } finally {
      await writeFaults(app.db.pool, FAULTS_OFF)
    }
    expect(await callCount('sandbox-monnify')).toBe(monnifyCallsBefore) // Monnify's health untouched

    // The API's reading of health is at most 5 s old: until it is renewed new payouts still go to
    // Paystack. Each is paid before the next is made, so that few are: each adds answered calls.
    await waitFor(
      async () => {
        const id = await payOut(client, 330_000)
        if ((await routedTo(id)) === 'sandbox-monnify') {
          failedOver = id
          return true
        }
        givenToPaystack.push(id)
        await settlePayout(client, id)
        return false
      },
      30_000,
      'a new payout routed to sandbox-monnify',
    )
    await waitFor(
      async () => (await instructionOf(failedOver))?.provider === 'sandbox-monnify',
      30_000,
      'the failed-over instruction',
    )
    await waitFor(
      async () => (await outboundState(client, failedOver)) === 'submitted',
      30_000,
      'the failed-over payout submitted at Monnify',
    )
  })

  it('/metrics shows sandbox-paystack unhealthy with its calls of the last five minutes, sandbox-monnify healthy', async () => {
    const samples = await scrape(app.baseUrl)
    expect(valueOf(samples, 'rail_provider_healthy', { provider: 'sandbox-paystack' })).toBe(0)
    expect(valueOf(samples, 'rail_provider_healthy', { provider: 'sandbox-monnify' })).toBe(1)
    const calls = valueOf(samples, 'rail_provider_calls_5m', { provider: 'sandbox-paystack' })
    const unanswered = valueOf(samples, 'rail_provider_calls_unanswered_5m', { provider: 'sandbox-paystack' })
    expect(unanswered).toBeGreaterThanOrEqual(UNANSWERED_CALLS)
    expect(calls).toBeGreaterThan(unanswered)
    expect(unanswered / calls).toBeGreaterThanOrEqual(0.5)
    expect(valueOf(samples, 'rail_provider_calls_5m', { provider: 'sandbox-monnify' })).toBeGreaterThan(0)
  })

  it('`rail provider list` shows sandbox-paystack unhealthy with its counts', async () => {
    const env = { DATABASE_URL: app.db.url }
    const listed = await runRail(['provider', 'list', '--json'], env)
    expect(listed.code, listed.stderr).toBe(0)
    const health = (name: string) =>
      (
        JSON.parse(listed.stdout) as {
          name: string
          health: { healthy: boolean; calls: number; unanswered: number; windowS: number }
        }[]
      ).find((p) => p.name === name)!.health
    expect(health('sandbox-paystack')).toMatchObject({ healthy: false, windowS: 300 })
    expect(health('sandbox-paystack').unanswered).toBeGreaterThanOrEqual(UNANSWERED_CALLS)
    expect(health('sandbox-paystack').calls).toBeGreaterThan(health('sandbox-paystack').unanswered)
    expect(health('sandbox-monnify').healthy).toBe(true)
    const text = await runRail(['provider', 'list'], env)
    expect(text.stdout).toMatch(/sandbox-paystack .* health=unhealthy \(\d+\/\d+ unanswered in 300s\)/)
    expect(text.stdout).toMatch(/sandbox-monnify .* health=healthy/)
  })

  it("the dashboard's transfer page shows each payout's provider and its health", async () => {
    const session = await signedInSession(app.db.pool, app.baseUrl, partnerId)
    const atPaystack = elementText(await dashboardPage(session, givenToPaystack[1]!), 'transfer-provider')
    expect(atPaystack).toMatch(/^sandbox-paystack \(unhealthy: \d+ of \d+ calls unanswered in the last 5 minutes\)$/)
    const atMonnify = elementText(await dashboardPage(session, failedOver), 'transfer-provider')
    expect(atMonnify).toMatch(/^sandbox-monnify \(healthy: \d+ of \d+ calls unanswered in the last 5 minutes\)$/)
  })

  it('what was given to Paystack is never sent to Monnify: it completes at Paystack, once', async () => {
    for (const id of [...givenToPaystack, failedOver]) await settlePayout(client, id)
    for (const id of givenToPaystack) {
      expect(await instructionOf(id)).toEqual({ provider: 'sandbox-paystack', state: 'succeeded' })
      expect(await providersCalledFor(id)).toEqual(['sandbox-paystack'])
      const atBank = await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])
      expect(atBank.rowCount, `bank transfers of ${id}`).toBe(1)
    }
    // Those whose send got no answer were asked about at Paystack (the dropped one sent again there), and paid once.
    for (const id of givenToPaystack.slice(1, 3)) {
      const calls = await app.db.pool.query<{ operation: string; outcome: string }>(
        `SELECT operation, outcome FROM provider_calls WHERE reference = $1 ORDER BY created_at`,
        [id],
      )
      expect(calls.rows.filter((call) => call.operation === 'payout')[0]?.outcome).toBe('unknown')
      expect(calls.rows.some((call) => call.operation === 'requery')).toBe(true)
    }
    expect(await instructionOf(failedOver)).toEqual({ provider: 'sandbox-monnify', state: 'succeeded' })
    expect(await providersCalledFor(failedOver)).toEqual(['sandbox-monnify'])
    expect(
      (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [failedOver])).rowCount,
    ).toBe(1)
    for (const id of [...givenToPaystack, failedOver])
      await waitFor(() => callbacksOf('transfer.confirmed', id) === 1, 20_000, `transfer.confirmed of ${id}`)
  })
})

async function callCount(provider: string): Promise<number> {
  return (
    await app.db.pool.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM provider_calls WHERE provider = $1`,
      [provider],
    )
  ).rows[0]!.count
}

// ---- secrets --------------------------------------------------------------------------------

describe('secrets never appear', () => {
  /** A real profile's secret key, held in a file and given to `rail provider add`. */
  const FILE_KEY = `sk_test_${randomBytes(20).toString('hex')}`
  let keyDir = ''
  /** What Rail showed along the way that a secret must not be in, by where it was shown. */
  const shown: { where: string; text: string }[] = []

  beforeAll(() => {
    keyDir = mkdtempSync(path.join(tmpdir(), 'rail-failover-'))
    writeFileSync(path.join(keyDir, 'paystack.key'), `${FILE_KEY}\n`)
  })
  afterAll(() => rmSync(keyDir, { recursive: true, force: true }))

  it.each(['sandbox-paystack', 'sandbox-monnify'])(
    'a partner routed through %s pays out and collects',
    async (provider) => {
      const { client, partnerId } = await routedPartner(app, hook, { payouts: [provider], collections: [provider] })
      const id = await payOut(client, 240_000)
      await settlePayout(client, id)
      expect(await providersCalledFor(id)).toEqual([provider])
      const intent = await client.post<{ virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 150_000,
      })
      expect(intent.status, JSON.stringify(intent.body)).toBe(200)
      const paid = await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
        virtualAccount: intent.body.virtualAccount,
        amountKobo: 150_000,
        payerName: 'ADA OBI',
      })
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const applied = `SELECT 1 FROM inbound_credits WHERE provider = $1 AND account_number = $2 AND status = 'applied'`
      await waitFor(
        async () => (await app.db.pool.query(applied, [provider, intent.body.virtualAccount])).rowCount === 1,
        30_000,
        'the credit applied',
      )
      const session = await signedInSession(app.db.pool, app.baseUrl, partnerId)
      shown.push({ where: `the dashboard page of ${provider}'s payout`, text: await dashboardPage(session, id) })
      shown.push({
        where: `the dashboard page of ${provider}'s payouts`,
        text: await (await fetch(`${app.baseUrl}/dashboard/transfers`, { headers: { cookie: session.cookie } })).text(),
      })
    },
  )

  it('a real profile added with `rail provider add` from a key file is asked with its key, which the sandbox does not know', async () => {
    const env = { DATABASE_URL: app.db.url, RAIL_MASTER_KEY: app.masterKey.toString('hex') }
    const baseUrl = `${app.baseUrl}${SANDBOX_PAYSTACK_PREFIX}`
    const added = await runRail(
      [
        'provider',
        'add',
        'paystack-key-file',
        '--adapter',
        'paystack',
        '--base-url',
        baseUrl,
        '--secret-key-file',
        path.join(keyDir, 'paystack.key'),
      ],
      env,
    )
    expect(added.code, added.stderr).toBe(0)
    shown.push({ where: '`rail provider add`', text: added.stdout + added.stderr })
    const { client } = await routedPartner(app, hook, { payouts: ['paystack-key-file'] })
    const resolved = await client.post('/api/v1/rail/banks/resolve', {
      bankCode: PAYEE.bankCode,
      accountNumber: PAYEE.accountNumber,
    })
    expect(resolved.status).not.toBe(200)
    shown.push({ where: 'the answer of POST /banks/resolve', text: JSON.stringify(resolved.body) })
    expect(await callCount('paystack-key-file')).toBeGreaterThan(0)
  })

  it('no secret is in provider_calls, the logs, `rail provider list`, the dashboard, /metrics or the callbacks', async () => {
    const monnify = sandboxMonnifyCredentials(SECRET)
    const secrets: Record<string, string> = {
      "sandbox Paystack's secret key": sandboxPaystackSecretKey(SECRET),
      "sandbox Monnify's API key": monnify.apiKey,
      "sandbox Monnify's client secret": monnify.secretKey,
      "sandbox Monnify's Basic credentials": Buffer.from(`${monnify.apiKey}:${monnify.secretKey}`).toString('base64'),
      'the file-held key': FILE_KEY,
    }
    const calls = await app.db.pool.query<{ provider: string; row: string }>(
      `SELECT provider, row_to_json(c)::text AS row FROM provider_calls c`,
    )
    expect(new Set(calls.rows.map((call) => call.provider))).toEqual(
      new Set(['sandbox-paystack', 'sandbox-monnify', 'paystack-key-file']),
    )
    shown.push({ where: 'provider_calls', text: calls.rows.map((call) => call.row).join('\n') })
    const env = { DATABASE_URL: app.db.url }
    for (const args of [
      ['provider', 'list'],
      ['provider', 'list', '--json'],
    ]) {
      const listed = await runRail(args, env)
      expect(listed.code, listed.stderr).toBe(0)
      expect(listed.stdout).toContain('paystack-key-file')
      shown.push({ where: `\`rail ${args.join(' ')}\``, text: listed.stdout + listed.stderr })
    }
    shown.push({ where: '/metrics', text: await (await fetch(`${app.baseUrl}/metrics`)).text() })
    shown.push({ where: 'the logs', text: logged.join('') })
    shown.push({ where: 'the callbacks', text: hook.requests.map((request) => request.rawBody).join('\n') })
    expect(logged.length).toBeGreaterThan(100)
    for (const { where, text } of shown)
      for (const [name, secret] of Object.entries(secrets))
        expect(text.includes(secret), `${name} in ${where}`).toBe(false)
  })
})
