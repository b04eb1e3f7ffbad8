// The sandbox adapter against the real sandbox bank over HTTP, and against a bank that misbehaves
// (hangs, 5xx, garbage, dropped connection): every such answer is `unknown`, never `failed`, and
// every call is recorded.
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { SandboxAdapter } from '../../src/banking/providers/sandbox-adapter.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

const SECRET = 'adapter-test-secret'
let app: TestApp
let adapter: SandboxAdapter

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: SECRET })
  adapter = new SandboxAdapter({
    provider: 'sandbox',
    baseUrl: app.baseUrl,
    secret: SECRET,
    pool: app.db.pool,
    requestId: 'req-test-1',
  })
})
afterAll(async () => app?.close())

describe('against the sandbox bank', () => {
  it('opens wallets, moves money and reads the outcome by NIP code', async () => {
    const ada = await adapter.createWallet({ customerReference: 'cust-ada', accountName: 'ADA OBI' })
    const obi = await adapter.createWallet({ customerReference: 'cust-obi', accountName: 'OBI ADA' })
    if (ada.outcome !== 'successful' || obi.outcome !== 'successful') throw new Error('wallets not opened')
    expect(ada.value).toMatchObject({ bankCode: '101', accountName: 'ADA OBI' })

    const credit = await adapter.credit({
      reference: randomUUID(),
      accountNumber: ada.value.accountNumber,
      amountKobo: 5_000,
      narration: 'fund',
    })
    expect(credit).toMatchObject({ outcome: 'successful', responseCode: '00' })
    const move = await adapter.walletTransfer({
      reference: randomUUID(),
      fromAccountNumber: ada.value.accountNumber,
      toAccountNumber: obi.value.accountNumber,
      amountKobo: 2_000,
    })
    expect(move).toMatchObject({ outcome: 'successful', responseCode: '00' })
    const tooMuch = await adapter.debit({
      reference: randomUUID(),
      accountNumber: obi.value.accountNumber,
      amountKobo: 2_001,
    })
    expect(tooMuch).toMatchObject({ outcome: 'failed', responseCode: '51' })
  })

  it('a retried move is never a second move: the duplicate is answered with the original’s outcome', async () => {
    const wallet = await adapter.createWallet({ customerReference: 'cust-dup', accountName: 'DUP' })
    if (wallet.outcome !== 'successful') throw new Error('wallet not opened')
    const reference = randomUUID()
    const first = await adapter.credit({ reference, accountNumber: wallet.value.accountNumber, amountKobo: 700 })
    const again = await adapter.credit({ reference, accountNumber: wallet.value.accountNumber, amountKobo: 700 })
    expect(first).toMatchObject({ outcome: 'successful', responseCode: '00' })
    expect(again).toMatchObject({ outcome: 'successful', responseCode: '00' })
    const balance = await app.db.pool.query(
      `SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`,
      [wallet.value.accountNumber],
    )
    expect(balance.rows[0].balance_kobo).toBe(700)
  })

  it('name enquiry returns the holder, or a final failure for a bad account', async () => {
    const found = await adapter.nameEnquiry({ bankCode: '058', accountNumber: nuban('058', '100200300') })
    expect(found.outcome).toBe('successful')
    expect(found.outcome === 'successful' && found.value.accountName).toMatch(/^[A-Z]+ [A-Z]+$/)
    expect(await adapter.nameEnquiry({ bankCode: '058', accountNumber: '1234567890' })).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
  })

  it('requery of an unseen reference is pending (25), not failed', async () => {
    expect(await adapter.requery(randomUUID())).toMatchObject({ outcome: 'pending', responseCode: '25' })
  })

  it('a wrong secret is not an answer: unknown', async () => {
    const wrong = new SandboxAdapter({ provider: 'sandbox', baseUrl: app.baseUrl, secret: 'nope', pool: app.db.pool })
    expect((await wrong.requery('x')).outcome).toBe('unknown')
  })
})

describe('against a misbehaving bank', () => {
  let server: http.Server
  let baseUrl: string
  let behaviour: 'hang' | '500' | 'garbage' | 'reset' | 'huge' = 'hang'

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      if (behaviour === 'hang') return // never answers
      if (behaviour === '500') return void response.writeHead(500).end('{"responseCode":"00"}')
      if (behaviour === 'garbage')
        return void response.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>oops')
      if (behaviour === 'huge')
        return void response.writeHead(200).end(`{"responseCode":"00","x":"${'a'.repeat(300_000)}"}`)
      request.socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it.each(['hang', '500', 'garbage', 'reset', 'huge'] as const)(
    '%s → unknown, recorded with its reason',
    async (kind) => {
      behaviour = kind
      const faulty = new SandboxAdapter({
        provider: 'sandbox',
        baseUrl,
        secret: SECRET,
        pool: app.db.pool,
        timeoutMs: 300,
      })
      const reference = randomUUID()
      const result = await faulty.debit({ reference, accountNumber: nuban('101', '000001000'), amountKobo: 1 })
      expect(result.outcome).toBe('unknown')
      const recorded = await app.db.pool.query(
        `SELECT operation, outcome, error, latency_ms FROM provider_calls WHERE reference = $1`,
        [reference],
      )
      expect(recorded.rows).toHaveLength(1)
      expect(recorded.rows[0]).toMatchObject({ operation: 'debit', outcome: 'unknown' })
      expect(recorded.rows[0].error).toBeTruthy()
    },
  )
})

it('records every call with its request id, code and latency', async () => {
  const calls = await app.db.pool.query(
    `SELECT provider, operation, outcome, response_code, request_id, latency_ms FROM provider_calls WHERE request_id = 'req-test-1'`,
  )
  expect(calls.rows.length).toBeGreaterThanOrEqual(8)
  expect(calls.rows.find((row) => row.operation === 'debit')).toMatchObject({
    provider: 'sandbox',
    outcome: 'failed',
    response_code: '51',
  })
  expect(calls.rows.find((row) => row.operation === 'create_wallet')).toMatchObject({
    outcome: 'successful',
    response_code: null,
  })
  for (const row of calls.rows) expect(row.latency_ms).toBeGreaterThanOrEqual(0)
})
