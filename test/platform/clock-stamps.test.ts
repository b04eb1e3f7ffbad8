// The times owners stamp on their state changes come from the injected clock, not from the
// database's now(): here the app's clock runs a day ahead of real time. Invoices (published,
// cancelled), virtual accounts (archived), and a payout the float cannot cover (failed at once:
// the transfer and its bank instruction).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../support/app.ts'
import { testClock } from '../support/clock.ts'
import { PAYEE } from '../support/payments.ts'

const DAY_MS = 86_400_000
const clock = testClock()
let app: TestApp

beforeAll(async () => {
  clock.advance(DAY_MS)
  app = await startTestApp({ clock })
})
afterAll(async () => {
  await app?.close()
})

/** Whether an ISO time is the clock's, read between `before` and now (a day from the database's). */
function byTheClock(iso: string | null, before: number): boolean {
  const ms = Date.parse(iso ?? '')
  return ms >= before && ms <= clock.now().getTime()
}

/** Requests are signed by the clock the app judges their timestamps by. */
const signedNow = () => ({ timestampS: Math.floor(clock.now().getTime() / 1000) })

it('stamps an invoice published and cancelled by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  const created = await client.post<{ reference: string; publishedAt: string | null }>('/api/v1/rail/invoice', { reference: randomUUID(), title: 'Rent', amountKobo: 100_000, publishOnCreate: true }, signedNow())
  expect(created.status).toBe(200)
  expect(byTheClock(created.body.publishedAt, before)).toBe(true)
  const cancelled = await client.post<{ cancelledAt: string | null; status: string }>(`/api/v1/rail/invoice/${created.body.reference}/cancel`, undefined, signedNow())
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled'])
  expect(byTheClock(cancelled.body.cancelledAt, before)).toBe(true)
  const stored = await app.db.pool.query<{ published_at: Date; cancelled_at: Date; status_changed_at: Date }>(
    `SELECT published_at, cancelled_at, status_changed_at FROM invoices WHERE reference = $1`,
    [created.body.reference],
  )
  expect(stored.rows[0]!.status_changed_at.getTime()).toBe(stored.rows[0]!.cancelled_at.getTime())
  expect(stored.rows[0]!.published_at.getTime() - Date.now()).toBeGreaterThan(DAY_MS / 2)
})

it('stamps a virtual account archived by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  const account = await client.post<{ trackingId: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() }, signedNow())
  expect(account.status).toBe(200)
  expect((await client.post(`/api/v1/rail/virtual-account/${account.body.trackingId}/archive`, undefined, signedNow())).status).toBe(200)
  const { rows } = await app.db.pool.query<{ archived_at: Date }>(`SELECT archived_at FROM virtual_accounts WHERE tracking_id = $1`, [account.body.trackingId])
  expect(byTheClock(rows[0]!.archived_at.toISOString(), before)).toBe(true)
})

it('stamps a payout the float cannot cover, and its unsent bank instruction, failed by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  const payout = await client.post<{ id: string; state: string; stateChangedAt: string; terminalAt: string | null }>(
    '/api/v1/rail/outbound',
    { clientReference: randomUUID(), amountKobo: 10_000, beneficiaryAccountNumber: PAYEE.accountNumber, beneficiaryBankCode: PAYEE.bankCode, beneficiaryAccountName: PAYEE.accountName, currency: 'NGN' },
    signedNow(),
  )
  expect([payout.status, payout.body.state]).toEqual([202, 'failed'])
  expect(byTheClock(payout.body.stateChangedAt, before)).toBe(true)
  expect(payout.body.terminalAt).toBe(payout.body.stateChangedAt)
  const { rows } = await app.db.pool.query<{ state: string; terminal_at: Date }>(`SELECT state, terminal_at FROM bank_instructions WHERE id = $1`, [payout.body.id])
  expect(rows[0]!.state).toBe('failed')
  expect(byTheClock(rows[0]!.terminal_at.toISOString(), before)).toBe(true)
})
