// Shared by the refunds tests: confirmed credits paid in through the sandbox bank, and the
// refunds' payouts driven to their end through the settlement simulator.
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { payIn, waitForCallback, type CollectionsHarness } from '../collections/support.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

export const PAYER = { payerName: 'Ngozi Eze', payerAccountNumber: nuban('044', '000765432'), payerBankCode: '044' }

export type RefundJson = Schemas['Refund']

export type RefundRequestJson = Schemas['CreateRefundResponse']

export type Partner = Awaited<ReturnType<CollectionsHarness['app']['newPartner']>>

export async function newPartner(harness: CollectionsHarness): Promise<Partner> {
  return harness.app.newPartner({ callbackUrl: harness.hook.url })
}

/** Pays `amountKobo` from PAYER into a new persistent account of the partner; answers the confirmed credit's id. */
export async function confirmedCredit(
  harness: CollectionsHarness,
  partner: Partner,
  amountKobo: number,
  payer: Record<string, string> = PAYER,
): Promise<string> {
  const account = (
    await partner.client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  return creditTo(harness, partner, account.virtualAccount, amountKobo, payer)
}

/** Pays into an account number and waits for the credit's credit.confirmed callback; answers its id. */
export async function creditTo(
  harness: CollectionsHarness,
  partner: Partner,
  virtualAccount: string,
  amountKobo: number,
  payer: Record<string, string> = PAYER,
): Promise<string> {
  const { sessionId } = await payIn(partner.client, virtualAccount, amountKobo, payer)
  const [callback] = await waitForCallback(
    harness.hook,
    partner.credentials.callbackSigningSecret,
    (body) => body.event === 'credit.confirmed' && body.data.sessionId === sessionId,
  )
  return callback!.data.creditId as string
}

export async function refund(client: RailClient, body: Record<string, unknown>) {
  return client.post<RefundRequestJson & { error?: string; details?: Record<string, unknown> }>(
    '/api/v1/rail/refunds',
    body,
  )
}

/** A refund the test expects to be made: 201, one refund, its payout submitted to the bank. */
export async function refundOne(client: RailClient, body: Record<string, unknown>): Promise<RefundJson> {
  const answer = await refund(client, body)
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  expect(answer.body.refunds).toHaveLength(1)
  return answer.body.refunds[0]!
}

/** Waits for a refund's payout to reach the bank, registers its outcome, and waits for the refund to end. */
export async function settleRefund(
  client: RailClient,
  refundId: string,
  outcome: 'confirmed' | 'failed',
): Promise<RefundJson> {
  const { outboundTransferId } = (await client.get<RefundJson>(`/api/v1/rail/refunds/${refundId}`)).body
  const payout = async () => (await client.get<{ state: string }>(`/api/v1/rail/outbound/${outboundTransferId}`)).body
  // When it never gets there, say where it stands (a busy machine once waited the whole limit here).
  await waitFor(async () => (await payout()).state === 'submitted', 15_000, 'refund payout submitted').catch(
    async (error: unknown) => {
      throw new Error(`${String(error)}; the payout: ${JSON.stringify(await payout())}`)
    },
  )
  expect(
    (
      await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
        transferId: outboundTransferId,
        outcome,
      })
    ).status,
  ).toBe(200)
  let ended: RefundJson | undefined
  await waitFor(
    async () => {
      ended = (await client.get<RefundJson>(`/api/v1/rail/refunds/${refundId}`)).body
      return ended.state !== 'pending'
    },
    20_000,
    `refund ${refundId} to end`,
  )
  return ended!
}

/** What the partner holds of collected money: collections and float, booked. */
export async function heldKobo(harness: CollectionsHarness, partnerId: string): Promise<number> {
  const result = await harness.app.db.pool.query<{ booked: string }>(
    `SELECT coalesce(sum(credits_posted - debits_posted), 0) AS booked FROM ledger_accounts WHERE partner_id = $1 AND kind IN ('collections', 'float')`,
    [partnerId],
  )
  return Number(result.rows[0]!.booked)
}

/** Rows that say something moved for a partner: refunds and outbound transfers. */
export async function movedFor(
  harness: CollectionsHarness,
  partnerId: string,
): Promise<{ refunds: number; payouts: number }> {
  const { pool } = harness.app.db
  const refunds = await pool.query<{ count: string }>(`SELECT count(*) FROM refunds WHERE partner_id = $1`, [partnerId])
  const payouts = await pool.query<{ count: string }>(`SELECT count(*) FROM outbound_transfers WHERE partner_id = $1`, [
    partnerId,
  ])
  return { refunds: Number(refunds.rows[0]!.count), payouts: Number(payouts.rows[0]!.count) }
}
