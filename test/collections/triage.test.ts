// Credits nobody can take: an archived account, an expired payment intent. They land in the
// partner's suspense account as unmatched, are listed, and are settled once — refunded to the
// sender through the outbound pipeline, or assigned to another account. Also the expiry sweep,
// and the requery that finds credits whose webhook was lost.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { expireIntents } from '../../src/collections/intents/service.ts'
import { SandboxBank } from '../../src/sandbox/service.ts'
import { allocationReference } from '../../src/collections/virtual-accounts/service.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  bookedKobo,
  payIn,
  postBankNotice,
  startCollections,
  waitForCallback,
  type CollectionsHarness,
} from './support.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

const PAYER = { payerName: 'Ngozi Eze', payerAccountNumber: nuban('044', '000765432'), payerBankCode: '044' }

interface TriageItem {
  id: string
  status: string
  reason: string
  amountKobo: number
  trackingId: string | null
  resolution: Record<string, unknown> | null
}

async function partner() {
  return harness.app.newPartner({ callbackUrl: harness.hook.url })
}

async function unmatchedOf(client: Awaited<ReturnType<typeof partner>>['client'], count = 1): Promise<TriageItem[]> {
  let items: TriageItem[] = []
  await waitFor(
    async () => {
      items = (await client.get<{ data: TriageItem[] }>('/api/v1/rail/unmatched?status=unmatched')).body.data
      return items.length >= count
    },
    15_000,
    'unmatched credit',
  )
  return items
}

describe('a credit to an archived account', () => {
  it('goes to suspense as unmatched, and a refund pays the sender back once', async () => {
    const { client, credentials } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    expect((await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)).status).toBe(200)
    await payIn(client, account.virtualAccount, 80_000, PAYER)
    const [item] = await unmatchedOf(client)
    expect(item).toMatchObject({
      status: 'unmatched',
      reason: 'account_archived',
      amountKobo: 80_000,
      trackingId: account.trackingId,
      resolution: null,
    })
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(80_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)

    // Two concurrent refund requests (signed a second apart: the same signature would be one request,
    // its replay): one settles it, the other is refused; one payout exists.
    const signedAtS = Math.floor(Date.now() / 1000)
    const [first, second] = await Promise.all([
      client.post<TriageItem>(
        `/api/v1/rail/unmatched/${item!.id}/resolve`,
        { action: 'refund' },
        { timestampS: signedAtS },
      ),
      client.post<TriageItem>(
        `/api/v1/rail/unmatched/${item!.id}/resolve`,
        { action: 'refund' },
        { timestampS: signedAtS + 1 },
      ),
    ])
    expect([first.status, second.status].sort()).toEqual([200, 409])
    const resolved = first.status === 200 ? first.body : second.body
    expect(resolved.status).toBe('refund_pending')
    const outboundId = resolved.resolution!.outboundTransferId as string
    const payouts = await harness.app.db.pool.query(`SELECT id FROM outbound_transfers WHERE partner_id = $1`, [
      credentials.partnerId,
    ])
    expect(payouts.rows.map((row) => row.id)).toEqual([outboundId])
    // Held on suspense, where the credit is (pending): the partner's float never carries it.
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(80_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(0)

    // The refund is a real outbound transfer to the sender: it is submitted, and settles through the simulator.
    await waitFor(
      async () =>
        (await client.get<{ state: string }>(`/api/v1/rail/outbound/${outboundId}`)).body.state === 'submitted',
      10_000,
      'refund submitted',
    )
    const refund = (
      await client.get<{ beneficiaryAccountNumber: string; amountKobo: number }>(`/api/v1/rail/outbound/${outboundId}`)
    ).body
    expect(refund).toMatchObject({ beneficiaryAccountNumber: PAYER.payerAccountNumber, amountKobo: 80_000 })
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: outboundId,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(200)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'transfer.confirmed' && body.data.id === outboundId,
    )
    // Refunded in the transaction that confirmed its payout: the hold posted from suspense.
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(0)

    // Listed with its resolution; resolving again is refused.
    const listed = (await client.get<{ data: TriageItem[] }>('/api/v1/rail/unmatched')).body.data
    expect(listed.find((entry) => entry.id === item!.id)?.status).toBe('refunded')
    const again = await client.post<{ error: string }>(`/api/v1/rail/unmatched/${item!.id}/resolve`, {
      action: 'assign',
      target: account.trackingId,
    })
    expect(again.status).toBe(409)
  })

  it('can be assigned to another account of the partner, once, with its callback', async () => {
    const { client, credentials } = await partner()
    const archived = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await client.post(`/api/v1/rail/virtual-account/${archived.trackingId}/archive`)
    const intent = (
      await client.post<{ id: string; trackingId: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 25_000,
      })
    ).body
    await payIn(client, archived.virtualAccount, 25_000)
    const [item] = await unmatchedOf(client)
    const assigned = await client.post<TriageItem>(`/api/v1/rail/unmatched/${item!.id}/resolve`, {
      action: 'assign',
      target: { trackingId: intent.trackingId },
    })
    expect(assigned.status).toBe(200)
    expect(assigned.body).toMatchObject({
      status: 'assigned',
      resolution: { action: 'assign', trackingId: intent.trackingId },
    })
    const [callback] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'credit.confirmed' && body.data.trackingId === intent.trackingId,
    )
    expect(callback!.data.paymentIntent).toMatchObject({ status: 'paid', amountReceivedKobo: 25_000 })
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(25_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(0)
    expect((await client.post(`/api/v1/rail/unmatched/${item!.id}/resolve`, { action: 'refund' })).status).toBe(409)
  })

  it('refuses bad resolutions and other partners, changing nothing', async () => {
    const { client } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)
    await payIn(client, account.virtualAccount, 7_000) // no payer account given: it cannot be refunded
    const [item] = await unmatchedOf(client)
    const noDestination = await client.post<{ error: string }>(`/api/v1/rail/unmatched/${item!.id}/resolve`, {
      action: 'refund',
    })
    expect(noDestination.status).toBe(422)
    expect(noDestination.body.error).toBe('refund_destination_unknown')
    // Assigning to an archived account, to someone else's account, with a bad body.
    expect(
      (
        await client.post(`/api/v1/rail/unmatched/${item!.id}/resolve`, {
          action: 'assign',
          target: account.trackingId,
        })
      ).status,
    ).toBe(409)
    const other = await partner()
    const theirs = (
      await other.client.post<{ trackingId: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    expect(
      (await client.post(`/api/v1/rail/unmatched/${item!.id}/resolve`, { action: 'assign', target: theirs.trackingId }))
        .status,
    ).toBe(422)
    for (const body of [
      {},
      { action: 'burn' },
      { action: 'assign' },
      { action: 'refund', target: account.trackingId },
      { action: 'assign', target: 42 },
    ]) {
      expect((await client.post(`/api/v1/rail/unmatched/${item!.id}/resolve`, body)).status, JSON.stringify(body)).toBe(
        422,
      )
    }
    expect((await other.client.post(`/api/v1/rail/unmatched/${item!.id}/resolve`, { action: 'refund' })).status).toBe(
      404,
    )
    expect((await other.client.get(`/api/v1/rail/unmatched/${item!.id}`)).status).toBe(404)
    expect((await client.get<TriageItem>(`/api/v1/rail/unmatched/${item!.id}`)).body.status).toBe('unmatched')
  })
})

describe('a credit to an account Rail has no record of', () => {
  it("goes to the triage of the partner the provider's allocation reference names", async () => {
    const { client, credentials } = await partner()
    // An allocation whose request failed after the bank answered: the bank has the account, Rail does not.
    const bank = new SandboxBank(harness.app.db.pool)
    const orphan = await bank.allocateVirtualAccount(
      'sandbox',
      allocationReference(credentials.partnerId, 'orphaned allocation'),
      'ORPHAN',
    )
    await bank.receiveInboundCredit({ accountNumber: orphan.accountNumber, amountKobo: 6_000, ...PAYER })
    const [item] = await unmatchedOf(client)
    expect(item).toMatchObject({ status: 'unmatched', reason: 'unknown_account', amountKobo: 6_000, trackingId: null })
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(6_000)
    const refunded = await client.post<TriageItem>(`/api/v1/rail/unmatched/${item!.id}/resolve`, { action: 'refund' })
    expect(refunded.status).toBe(200)
    expect(refunded.body.status).toBe('refund_pending')
  })
})

describe('a credit in another currency', () => {
  it('goes to triage, and cannot be assigned to a naira account', async () => {
    const { client, credentials } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    const notice = JSON.stringify({
      type: 'credit.received',
      sessionId: `666${Date.now()}`,
      accountNumber: account.virtualAccount,
      amountKobo: 5_000,
      currency: 'USD',
      creditedAt: new Date().toISOString(),
    })
    expect((await postBankNotice(harness.app.baseUrl, notice)).status).toBe(200)
    const [item] = await unmatchedOf(client)
    expect(item).toMatchObject({ reason: 'currency_mismatch', amountKobo: 5_000 })
    const refused = await client.post<{ error: string }>(`/api/v1/rail/unmatched/${item!.id}/resolve`, {
      action: 'assign',
      target: account.trackingId,
    })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toBe('invalid_state')
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
  })
})

describe('a refund whose payout fails', () => {
  it('puts the money back in suspense and the credit back in triage, to be settled again', async () => {
    const { client, credentials } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)
    await payIn(client, account.virtualAccount, 9_000, PAYER)
    const [item] = await unmatchedOf(client)
    const pending = (await client.post<TriageItem>(`/api/v1/rail/unmatched/${item!.id}/resolve`, { action: 'refund' }))
      .body
    const outboundId = pending.resolution!.outboundTransferId as string
    await waitFor(
      async () =>
        (await client.get<{ state: string }>(`/api/v1/rail/outbound/${outboundId}`)).body.state === 'submitted',
      10_000,
      'refund submitted',
    )
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: outboundId,
          outcome: 'failed',
        })
      ).status,
    ).toBe(200)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'transfer.failed' && body.data.id === outboundId,
    )
    // In the transaction that failed the payout: its hold voided back to suspense, the credit in triage again.
    // The float never carried it.
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(9_000)
    const reopened = (await client.get<TriageItem>(`/api/v1/rail/unmatched/${item!.id}`)).body
    expect(reopened).toMatchObject({
      status: 'unmatched',
      resolution: { action: 'refund', outboundTransferId: outboundId, outcome: 'failed' },
    })
    const floatMoves = await harness.app.db.pool.query(
      `SELECT count(*)::int AS n FROM ledger_transfers t JOIN ledger_accounts a ON a.id IN (t.debit_account_id, t.credit_account_id)
        WHERE a.partner_id = $1 AND a.kind = 'float'`,
      [credentials.partnerId],
    )
    expect(floatMoves.rows[0].n).toBe(0)
    // Settled again, another way.
    const target = (
      await client.post<{ trackingId: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    const assigned = await client.post<TriageItem>(`/api/v1/rail/unmatched/${item!.id}/resolve`, {
      action: 'assign',
      target: target.trackingId,
    })
    expect(assigned.status).toBe(200)
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(9_000)
  })

  it('is not started again by a replay of the request that started it: a new refund needs a new request', async () => {
    const { client, credentials } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)
    await payIn(client, account.virtualAccount, 9_100, PAYER)
    const [item] = await unmatchedOf(client)
    // One request with its Idempotency-Key, sent again byte for byte (a retry, or a replay by whoever copied it) within the signature's window.
    const timestampS = Math.floor(Date.now() / 1000)
    const key = randomUUID()
    const resolve = () =>
      client.post<TriageItem>(
        `/api/v1/rail/unmatched/${item!.id}/resolve`,
        { action: 'refund' },
        { timestampS, headers: { 'Idempotency-Key': key } },
      )
    const pending = (await resolve()).body
    const outboundId = pending.resolution!.outboundTransferId as string
    await waitFor(
      async () =>
        (await client.get<{ state: string }>(`/api/v1/rail/outbound/${outboundId}`)).body.state === 'submitted',
      10_000,
      'refund submitted',
    )
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: outboundId,
          outcome: 'failed',
        })
      ).status,
    ).toBe(200)
    await waitFor(
      async () => (await client.get<TriageItem>(`/api/v1/rail/unmatched/${item!.id}`)).body.status === 'unmatched',
      10_000,
      'back in triage',
    )
    const refunds = async () =>
      (
        await harness.app.db.pool.query(`SELECT count(*)::int AS n FROM outbound_transfers WHERE partner_id = $1`, [
          credentials.partnerId,
        ])
      ).rows[0].n
    expect(await refunds()).toBe(1)

    const replayed = await resolve()
    expect(replayed.status).toBe(200)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    // The stored answer of the first request: the refund it started.
    expect(replayed.body).toEqual(pending)
    expect(await refunds()).toBe(1)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(9_100)

    // A new request (a new key) starts a new refund.
    const again = await client.post<TriageItem>(
      `/api/v1/rail/unmatched/${item!.id}/resolve`,
      { action: 'refund' },
      { headers: { 'Idempotency-Key': randomUUID() } },
    )
    expect(again.status).toBe(200)
    expect(again.body.status).toBe('refund_pending')
    expect(await refunds()).toBe(2)
  })
})

describe('payment intent expiry', () => {
  it('expires open intents past their time, archives their accounts, and sends later credits to triage', async () => {
    const { client } = await partner()
    const intent = (
      await client.post<{ id: string; trackingId: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 10_000,
      })
    ).body
    const fresh = (await client.post<{ id: string }>('/api/v1/rail/payment/intent', { reference: randomUUID() })).body
    await harness.app.db.pool.query(
      `UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [intent.id],
    )
    expect(await expireIntents(harness.app.db.pool, systemClock)).toBeGreaterThanOrEqual(1)
    expect((await client.get<{ status: string }>(`/api/v1/rail/payment/intent/${intent.id}`)).body.status).toBe(
      'expired',
    )
    expect((await client.get<{ status: string }>(`/api/v1/rail/payment/intent/${fresh.id}`)).body.status).toBe(
      'pending',
    )
    const account = await harness.app.db.pool.query(`SELECT status FROM virtual_accounts WHERE tracking_id = $1`, [
      intent.trackingId,
    ])
    expect(account.rows[0].status).toBe('archived')
    // The provider is told too (a job).
    await waitFor(
      async () =>
        (
          await harness.app.db.pool.query(`SELECT archived_at FROM sandbox_bank.accounts WHERE account_number = $1`, [
            intent.virtualAccount,
          ])
        ).rows[0].archived_at !== null,
      10_000,
      'archived at the bank',
    )
    await payIn(client, intent.virtualAccount, 10_000)
    const [item] = await unmatchedOf(client)
    expect(item).toMatchObject({ reason: 'account_archived', trackingId: intent.trackingId })
    expect(await expireIntents(harness.app.db.pool, systemClock)).toBe(0)
  })
})

describe('requery for missed credits', () => {
  it('finds a credit whose webhook was lost and applies it once', async () => {
    const { client, credentials } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await payIn(client, account.virtualAccount, 11_000)
    const lost = await payIn(client, account.virtualAccount, 19_404) // magic amount: the bank never announces it
    expect(lost.notified).toBe(false)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === account.trackingId,
    )
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(11_000)

    const requery = await client.post<{
      creditsFound: number
      creditsRecorded: number
      credits: { sessionId: string; status: string }[]
    }>(`/api/v1/rail/virtual-account/${account.trackingId}/requery`)
    expect(requery.status).toBe(200)
    expect(requery.body.creditsFound).toBe(2)
    expect(requery.body.creditsRecorded).toBe(1)
    expect(requery.body.credits.map((credit) => credit.status)).toEqual(['confirmed', 'confirmed'])
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === account.trackingId,
      2,
    )
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(30_404)
    // Asking again finds nothing new and moves nothing.
    const again = await client.post<{ creditsRecorded: number }>(
      `/api/v1/rail/virtual-account/${account.trackingId}/requery`,
    )
    expect(again.body.creditsRecorded).toBe(0)
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(30_404)
    const other = await partner()
    expect((await other.client.post(`/api/v1/rail/virtual-account/${account.trackingId}/requery`)).status).toBe(404)
  })
})
