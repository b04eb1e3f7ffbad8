// Escrow money out to the recipient over HTTP, with real workers, the sandbox bank and a real
// webhook receiver: a release with a destination is an outbound transfer of the payment pipeline
// (origin escrow, held on the escrow holding account) settled by the simulator; a failed one keeps
// the money held until the partner releases again to another destination; a release without a
// destination credits the partner's float; bad input (a name the bank does not give, asked of it at once) and a
// change after release move nothing.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { bookedKobo, payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { creditEscrow, createRequest, escrowClient, type EscrowClient } from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { RailWebhookEvent, Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness
const SECRET = 'escrow-disbursement-webhook-secret'

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

/** A recipient's account at another bank, as the sandbox bank names it. */
function recipient(serial: string) {
  const accountNumber = nuban('058', serial)
  return { accountNumber, bankCode: '058', accountName: syntheticAccountName('058', accountNumber) }
}
const FIRST = recipient('111222333')
const SECOND = recipient('444555666')

type Disbursement = NonNullable<Schemas['Escrow']['disbursement']>
type EscrowJson = Schemas['Escrow']
type OutboundJson = Schemas['OutboundTransfer']
/** The escrow events Rail delivers, as the SDK types them. */
type EventJson = Extract<RailWebhookEvent, { event: `escrow.${string}` }>

async function escrowPartner() {
  const { client, credentials } = await harness.app.newPartner()
  const api = escrowClient(harness.app.baseUrl, credentials.escrowApiKey)
  expect((await api.webhook({ webhookUrl: harness.hook.url, webhookSecret: SECRET })).status).toBe(200)
  return { client, partnerId: credentials.partnerId, api }
}

const read = async (api: EscrowClient, ref: string) => (await api.get<{ escrow: EscrowJson }>(ref)).body.escrow

async function fundedEscrow(
  partnerId: string,
  api: EscrowClient,
  overrides: Record<string, unknown> = {},
  amount = 50_000,
): Promise<string> {
  const created = await api.create<{ ref: string }>(createRequest({ amount, ...overrides }))
  expect(created.status).toBe(201)
  expect(await creditEscrow(harness.app.db.pool, { partnerId, ref: created.body.ref, amountKobo: amount })).toBe(
    'applied',
  )
  expect((await read(api, created.body.ref)).status).toBe('funded')
  return created.body.ref
}

/** The escrow's events at the receiver, each signed with the escrow webhookSecret. */
function escrowEvents(ref: string): EventJson[] {
  return harness.hook.requests
    .filter((request) => request.rawBody.includes(ref) && request.rawBody.includes('"escrow.'))
    .map((request) => {
      expect(request.headers['x-rail-signature']).toBe(
        `sha256=${createHmac('sha256', SECRET).update(request.rawBody).digest('hex')}`,
      )
      return JSON.parse(request.rawBody) as EventJson
    })
}

async function eventArrives<Name extends EventJson['event']>(
  ref: string,
  type: Name,
): Promise<Extract<EventJson, { event: Name }>> {
  await waitFor(() => escrowEvents(ref).some((event) => event.event === type), 20_000, type)
  return escrowEvents(ref).find((event): event is Extract<EventJson, { event: Name }> => event.event === type)!
}

const outbound = async (client: RailClient, id: string) =>
  (await client.get<OutboundJson>(`/api/v1/rail/outbound/${id}`)).body

/** Waits for the payout to reach the bank, then has the bank settle it so. */
async function settle(client: RailClient, transferId: string, outcome: 'confirmed' | 'failed'): Promise<void> {
  await waitFor(async () => (await outbound(client, transferId)).state === 'submitted', 15_000, 'submitted')
  expect((await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId, outcome })).status).toBe(
    200,
  )
}

async function disbursementReaches(api: EscrowClient, ref: string, state: string): Promise<Disbursement> {
  await waitFor(async () => (await read(api, ref)).disbursement?.state === state, 20_000, `disbursement ${state}`)
  return (await read(api, ref)).disbursement!
}

/** Every ledger line of the partner's accounts, posted and pending: unchanged when nothing moved. */
async function ledgerOf(partnerId: string) {
  const result = await harness.app.db.pool.query(
    `SELECT kind, debits_pending, debits_posted, credits_pending, credits_posted FROM ledger_accounts WHERE partner_id = $1 ORDER BY kind, id`,
    [partnerId],
  )
  return result.rows
}

/** The partner's outbound transfers of any origin. */
const outboundList = async (client: RailClient) =>
  (await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound')).body.data

/** Runs `work` while the sandbox bank fails every request (a 5xx). */
async function whileBankFails<T>(work: () => Promise<T>): Promise<T> {
  await harness.app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 1 WHERE id = 1`)
  try {
    return await work()
  } finally {
    await harness.app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 0 WHERE id = 1`)
  }
}

describe('escrow disbursement', () => {
  it('funded by the payer, released to a bank account: an escrow payout in the outbound list, confirmed by the bank, escrow.disbursed delivered', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const created = await api.create<{ ref: string; funding: { virtualAccount: string } }>(
      createRequest({ amount: 60_000 }),
    )
    const ref = created.body.ref
    expect((await read(api, ref)).disbursement).toEqual({
      destination: 'float',
      state: 'awaiting_release',
      outboundTransferId: null,
    })
    await payIn(client, created.body.funding.virtualAccount, 60_000)
    await waitFor(async () => (await read(api, ref)).status === 'funded', 15_000, 'funded')

    const released = await api.release<{ status: string; message: string }>(ref, {
      reason: 'goods received',
      disbursement: FIRST,
    })
    expect(released.status).toBe(200)
    expect(released.body.status).toBe('released')
    const pending = (await read(api, ref)).disbursement!
    expect(pending).toEqual({ destination: FIRST, state: 'pending', outboundTransferId: expect.any(String) })
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 1,
      20_000,
      'the payout listed',
    )
    // An ordinary payout of the pipeline, its origin the escrow, held on the escrow holding account (the float is not touched).
    const listed = (await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound?origin=escrow')).body.data
    expect(listed).toHaveLength(1)
    expect(listed[0]).toEqual(
      expect.objectContaining({
        id: pending.outboundTransferId,
        amountKobo: 60_000,
        beneficiaryAccountNumber: FIRST.accountNumber,
        beneficiaryBankCode: FIRST.bankCode,
        beneficiaryAccountName: FIRST.accountName,
        origin: { type: 'escrow', id: expect.any(String), reference: ref },
      }),
    )
    // The origin names the escrow as the partner reads it: its id and its ref.
    expect(listed[0]!.origin.id).toBe((await api.get<{ escrow: { id: string } }>(ref)).body.escrow.id)
    expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(60_000) // held until the bank answers
    expect(await bookedKobo(harness.app, partnerId, 'float')).toBe(0)
    expect((await api.release<{ error: string }>(ref, { disbursement: SECOND })).body.error).toBe(
      'invalid_escrow_status',
    ) // pending: no change

    await settle(client, pending.outboundTransferId!, 'confirmed')
    expect(await disbursementReaches(api, ref, 'paid')).toEqual({
      destination: FIRST,
      state: 'paid',
      outboundTransferId: pending.outboundTransferId,
    })
    const event = await eventArrives(ref, 'escrow.disbursed')
    expect(event.data).toEqual({
      ref,
      status: 'released',
      amount: 60_000,
      currency: 'NGN',
      disbursement: { destination: FIRST, state: 'paid', outboundTransferId: pending.outboundTransferId },
    })
    expect(escrowEvents(ref).map((e) => e.event)).toEqual(['escrow.funded', 'escrow.released', 'escrow.disbursed'])
    expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(0)
    expect((await outbound(client, pending.outboundTransferId!)).state).toBe('confirmed')
    // The bank paid the recipient once.
    const paid = await harness.app.db.pool.query(
      `SELECT amount_kobo FROM sandbox_bank.transfers WHERE reference = $1 AND kind = 'payout' AND response_code = '00'`,
      [pending.outboundTransferId],
    )
    expect(paid.rows).toEqual([{ amount_kobo: 60_000 }])
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('a failed disbursement keeps the money held; released again to another destination, it is paid', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const ref = await fundedEscrow(partnerId, api, { disbursement: FIRST })
    expect((await read(api, ref)).disbursement).toEqual({
      destination: FIRST,
      state: 'awaiting_release',
      outboundTransferId: null,
    })
    expect((await api.release(ref)).status).toBe(200) // to the destination given at create
    const first = (await read(api, ref)).disbursement!
    expect(first).toEqual(expect.objectContaining({ destination: FIRST, state: 'pending' }))

    await settle(client, first.outboundTransferId!, 'failed')
    const failed = await disbursementReaches(api, ref, 'failed')
    expect(failed).toEqual({
      destination: FIRST,
      state: 'failed',
      outboundTransferId: first.outboundTransferId,
      failureReason: expect.objectContaining({ code: expect.any(String) }),
    })
    const failedEvent = await eventArrives(ref, 'escrow.disbursement_failed')
    expect(failedEvent.data.disbursement).toEqual(
      expect.objectContaining({ state: 'failed', outboundTransferId: first.outboundTransferId }),
    )
    expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(50_000) // the hold was voided: still held
    expect((await read(api, ref)).status).toBe('released')

    const again = await api.release<{ message: string }>(ref, { disbursement: SECOND })
    expect(again.status).toBe(200)
    expect(again.body.message).toMatch(/retried/)
    const second = (await read(api, ref)).disbursement!
    expect(second).toEqual({ destination: SECOND, state: 'pending', outboundTransferId: expect.any(String) })
    expect(second.outboundTransferId).not.toBe(first.outboundTransferId)
    await settle(client, second.outboundTransferId!, 'confirmed')
    await disbursementReaches(api, ref, 'paid')
    await eventArrives(ref, 'escrow.disbursed')
    expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(0)
    // Paid: no further change.
    const refused = await api.release<{ error: string; message: string }>(ref, { disbursement: FIRST })
    expect([refused.status, refused.body.error]).toEqual([400, 'invalid_escrow_status'])
    expect(refused.body.message).toMatch(/disbursement is paid/)
    expect(escrowEvents(ref).map((e) => e.event)).toEqual([
      'escrow.funded',
      'escrow.released',
      'escrow.disbursement_failed',
      'escrow.disbursed',
    ])
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 2,
      20_000,
      'both payouts listed',
    )
    const payouts = (await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound?origin=escrow')).body.data
    expect(payouts.map((payout) => payout.state).sort()).toEqual(['confirmed', 'failed'])
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('released without a destination: the amount is credited to the partner’s float at once (the remittance flow)', async () => {
    const { partnerId, api } = await escrowPartner()
    const ref = await fundedEscrow(partnerId, api)
    const released = await api.release<{ message: string }>(ref, { reason: 'identity verified at operator' })
    expect(released.status).toBe(200)
    expect(released.body.message).toMatch(/float/)
    expect((await read(api, ref)).disbursement).toEqual({
      destination: 'float',
      state: 'paid',
      outboundTransferId: null,
    })
    expect(await bookedKobo(harness.app, partnerId, 'float')).toBe(50_000)
    expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(0)
    const event = await eventArrives(ref, 'escrow.disbursed')
    expect(event.data.disbursement).toEqual({ destination: 'float', state: 'paid', outboundTransferId: null })
    // Nothing failed, so there is nothing to release again.
    expect((await api.release<{ error: string }>(ref, { disbursement: FIRST })).body.error).toBe(
      'invalid_escrow_status',
    )
    await expectLedgerVerified(harness.app.db.pool)
  })
})

describe('bad disbursement input: a clear error, nothing moved', () => {
  const invalid: [string, Record<string, unknown>, string][] = [
    ['an invalid NUBAN', { ...FIRST, accountNumber: '1234567890' }, 'disbursement.accountNumber'],
    ['an unknown bank code', { ...FIRST, bankCode: '999' }, 'disbursement.bankCode'],
  ]
  for (const [what, disbursement, field] of invalid) {
    it(`create with ${what}: 422 naming the field, no escrow`, async () => {
      const { api } = await escrowPartner()
      const response = await api.create<{ error: string; details: { fields: { field: string }[] } }>(
        createRequest({ disbursement }),
      )
      expect(response.status).toBe(422)
      expect(response.body.error).toBe('validation_error')
      expect(response.body.details.fields.map((f) => f.field)).toEqual([field])
      expect((await api.list<{ data: unknown[] }>()).body.data).toEqual([])
    })

    it(`release with ${what}: 422, the escrow stays funded and its money held`, async () => {
      const { partnerId, api } = await escrowPartner()
      const ref = await fundedEscrow(partnerId, api)
      const response = await api.release<{ error: string }>(ref, { disbursement })
      expect([response.status, response.body.error]).toEqual([422, 'validation_error'])
      expect((await read(api, ref)).status).toBe('funded')
      expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(50_000)
    })
  }

  describe('a name the bank does not give for the account (its name enquiry, asked at once): 422 naming disbursement.accountName, nothing moved', () => {
    const mismatched = { ...FIRST, accountName: 'SOMEONE ELSE ENTIRELY' }
    type Refusal = { error: string; details: { fields: { field: string }[]; bankAccountName: string } }

    it('on create: no escrow', async () => {
      const { api } = await escrowPartner()
      const response = await api.create<Refusal>(createRequest({ disbursement: mismatched }))
      expect([response.status, response.body.error]).toEqual([422, 'validation_error'])
      expect(response.body.details.fields.map((f) => f.field)).toEqual(['disbursement.accountName'])
      expect(response.body.details.bankAccountName).toBe(FIRST.accountName)
      expect((await api.list<{ data: unknown[] }>()).body.data).toEqual([])
    })

    it('on release: no outbound transfer, the escrow still funded, the ledger unchanged; released to the right name after, it is paid', async () => {
      const { client, partnerId, api } = await escrowPartner()
      const ref = await fundedEscrow(partnerId, api)
      const before = await ledgerOf(partnerId)
      const response = await api.release<Refusal>(ref, { disbursement: mismatched })
      expect([response.status, response.body.error]).toEqual([422, 'validation_error'])
      expect(response.body.details.fields.map((f) => f.field)).toEqual(['disbursement.accountName'])
      expect(response.body.details.bankAccountName).toBe(FIRST.accountName)
      expect(await outboundList(client)).toEqual([])
      const escrow = await read(api, ref)
      expect(escrow.status).toBe('funded')
      expect(escrow.disbursement).toEqual({ destination: 'float', state: 'awaiting_release', outboundTransferId: null })
      expect(await ledgerOf(partnerId)).toEqual(before)
      expect(await bookedKobo(harness.app, partnerId, 'escrow_holding')).toBe(50_000)
      expect(escrowEvents(ref).map((event) => event.event)).not.toContain('escrow.released')

      expect((await api.release(ref, { disbursement: FIRST })).status).toBe(200)
      const transferId = (await read(api, ref)).disbursement!.outboundTransferId!
      await settle(client, transferId, 'confirmed')
      await disbursementReaches(api, ref, 'paid')
      await expectLedgerVerified(harness.app.db.pool)
    })
  })

  describe('the bank does not answer the name enquiry: 502 provider_unavailable, nothing written', () => {
    it('on create: no escrow', async () => {
      const { api } = await escrowPartner()
      const response = await whileBankFails(() => api.create<{ error: string }>(createRequest({ disbursement: FIRST })))
      expect([response.status, response.body.error]).toEqual([502, 'provider_unavailable'])
      expect((await api.list<{ data: unknown[] }>()).body.data).toEqual([])
    })

    it('on release: the escrow still funded, no outbound transfer, the ledger unchanged', async () => {
      const { client, partnerId, api } = await escrowPartner()
      const ref = await fundedEscrow(partnerId, api)
      const before = await ledgerOf(partnerId)
      const response = await whileBankFails(() => api.release<{ error: string }>(ref, { disbursement: FIRST }))
      expect([response.status, response.body.error]).toEqual([502, 'provider_unavailable'])
      expect((await read(api, ref)).status).toBe('funded')
      expect(await outboundList(client)).toEqual([])
      expect(await ledgerOf(partnerId)).toEqual(before)
    })
  })

  it('unknown or missing fields in the destination, or a malformed account number: 422', async () => {
    const { partnerId, api } = await escrowPartner()
    expect((await api.create(createRequest({ disbursement: { ...FIRST, iban: 'x' } }))).status).toBe(422)
    expect(
      (await api.create(createRequest({ disbursement: { accountNumber: FIRST.accountNumber, bankCode: '058' } })))
        .status,
    ).toBe(422)
    const ref = await fundedEscrow(partnerId, api)
    expect((await api.release(ref, { disbursement: { ...FIRST, accountNumber: '12345' } })).status).toBe(422)
    expect((await api.release(ref, { disbursement: 'float' })).status).toBe(422)
    expect((await read(api, ref)).status).toBe('funded')
  })

  it('another partner’s escrow: 404, and it stays funded', async () => {
    const owner = await escrowPartner()
    const other = await escrowPartner()
    const ref = await fundedEscrow(owner.partnerId, owner.api)
    const response = await other.api.release<{ error: string }>(ref, { disbursement: FIRST })
    expect([response.status, response.body.error]).toEqual([404, 'not_found'])
    expect((await read(owner.api, ref)).status).toBe('funded')
    expect(await bookedKobo(harness.app, owner.partnerId, 'escrow_holding')).toBe(50_000)
  })

  it('a cancelled escrow shows no disbursement and cannot be released', async () => {
    const { api } = await escrowPartner()
    const ref = (await api.create<{ ref: string }>(createRequest({ disbursement: FIRST }))).body.ref
    expect((await api.cancel(ref, { reason: 'no longer needed' })).status).toBe(200)
    expect((await read(api, ref)).disbursement).toBeNull()
    expect((await api.release<{ error: string }>(ref, { disbursement: FIRST })).body.error).toBe(
      'invalid_escrow_status',
    )
  })
})
