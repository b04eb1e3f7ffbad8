// One name-enquiry budget per partner for every route that may show a holder's name: POST
// /banks/resolve, a settlement account (PUT /settlement), an escrow's disbursement (create and
// release). Spent on any of them, the others answer the same 429 with Retry-After, show no name
// and ask no bank. A payout's own check (the pipeline's, in a worker) shows no name at all: an
// outbound transfer or a wallet send to a name the bank does not give fails name_mismatch without
// whom the bank names, in the answer, on GET and in the callback (docs/banking.md).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { PARTNER_RPS_DEFAULT, UNAUTHENTICATED_RPS_DEFAULT } from '../../src/platform/rate-limit.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { BANK_SECRET } from '../collections/support.ts'
import { createRequest, creditEscrow, escrowClient } from '../support/escrow.ts'
import { PAYEE, paymentParty, PAYMENT_WORKERS } from '../support/payments.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const ENQUIRIES_PER_MINUTE = 3
const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 }, leaseMs: 5_000 }
let app: Rail
let hook: Receiver

beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    payments: SETTINGS,
    edge: {
      rateLimits: {
        partnerRps: PARTNER_RPS_DEFAULT,
        unauthenticatedRps: UNAUTHENTICATED_RPS_DEFAULT,
        nameEnquiriesPerMinute: ENQUIRIES_PER_MINUTE,
      },
    },
    workers: PAYMENT_WORKERS,
    receiver: true,
  })
  hook = app.receiver
})
afterAll(() => app?.close())

type ErrorJson = Schemas['ErrorBody']

/** An account at another bank, its holder's name as the sandbox bank's name enquiry gives it. */
function account(serial: string) {
  const accountNumber = nuban('058', serial)
  return { bankCode: '058', accountNumber, accountName: syntheticAccountName('058', accountNumber) }
}

async function nameEnquiriesAt(accountNumber: string): Promise<number> {
  const { rows } = await app.db.pool.query<{ count: string }>(
    `SELECT count(*) FROM provider_calls WHERE operation = 'name_enquiry' AND split_part(reference, ':', 2) = $1`,
    [accountNumber],
  )
  return Number(rows[0]!.count)
}

async function spendOnResolve(client: RailClient): Promise<void> {
  for (let i = 0; i < ENQUIRIES_PER_MINUTE; i++) {
    expect(
      (
        await client.post('/api/v1/rail/banks/resolve', {
          bankCode: '058',
          accountNumber: account(String(310_000_000 + i)).accountNumber,
        })
      ).status,
    ).toBe(200)
  }
}

/** The one refusal past the budget: 429 rate_limited, Retry-After, no name, no enquiry at the bank. */
async function expectRefusedPastBudget(
  answer: { status: number; headers: Headers; body: unknown },
  asked: { accountNumber: string; accountName: string },
) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429)
  expect((answer.body as ErrorJson).error).toBe('rate_limited')
  expect((answer.body as ErrorJson).details).toEqual({ limit: ENQUIRIES_PER_MINUTE, windowSeconds: 60 })
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(JSON.stringify(answer.body)).not.toContain(asked.accountName)
  expect(await nameEnquiriesAt(asked.accountNumber)).toBe(0)
}

const misnamed = (serial: string) => ({ ...account(serial), accountName: 'SOMEONE ELSE ENTIRELY' })

describe('the name-enquiry budget, shared by every route that may show a name', () => {
  it('spent on /banks/resolve: an escrow create with a disbursement answers 429 and shows no name', async () => {
    const { client, credentials } = await app.newPartner()
    await spendOnResolve(client)
    const asked = misnamed('320000001')
    const answer = await escrowClient(app.baseUrl, credentials.escrowApiKey).create(
      createRequest({ disbursement: asked }),
    )
    await expectRefusedPastBudget(answer, account('320000001'))
    expect(
      (await app.db.pool.query(`SELECT 1 FROM escrows WHERE partner_id = $1`, [credentials.partnerId])).rowCount,
    ).toBe(0)
  })

  it('spent on /banks/resolve: an escrow release with a disbursement answers 429 and shows no name', async () => {
    const { client, credentials } = await app.newPartner()
    const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const created = await api.create<{ ref: string }>(createRequest())
    expect(created.status).toBe(201)
    expect(
      await creditEscrow(app.db.pool, { partnerId: credentials.partnerId, ref: created.body.ref, amountKobo: 50_000 }),
    ).toBe('applied')
    await spendOnResolve(client)
    const answer = await api.release(created.body.ref, { disbursement: misnamed('320000002') })
    await expectRefusedPastBudget(answer, account('320000002'))
    expect((await api.get<{ escrow: { status: string } }>(created.body.ref)).body.escrow.status).toBe('funded')
  })

  it('spent on /banks/resolve: PUT /settlement with a bank account answers 429 and shows no name', async () => {
    const { client } = await app.newPartner()
    await spendOnResolve(client)
    const answer = await client.request('PUT', '/api/v1/rail/settlement', {
      mode: 'bank',
      bankAccount: misnamed('320000003'),
    })
    await expectRefusedPastBudget(answer, account('320000003'))
    expect((await client.get<{ mode: string }>('/api/v1/rail/settlement')).body.mode).toBe('float')
  })

  it('spent on settlement and escrow routes: /banks/resolve answers 429; another partner still has its own budget', async () => {
    const { client, credentials } = await app.newPartner()
    const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const shown = await client.request<ErrorJson>('PUT', '/api/v1/rail/settlement', {
      mode: 'bank',
      bankAccount: misnamed('330000001'),
    })
    expect([shown.status, shown.body.details?.bankAccountName]).toEqual([422, account('330000001').accountName])
    expect((await api.create(createRequest({ disbursement: account('330000002') }))).status).toBe(201)
    expect((await api.create(createRequest({ disbursement: misnamed('330000003') }))).status).toBe(422)
    const answer = await client.post('/api/v1/rail/banks/resolve', {
      bankCode: '058',
      accountNumber: account('330000004').accountNumber,
    })
    await expectRefusedPastBudget(answer, account('330000004'))
    const other = (await app.newPartner()).client
    expect(
      (
        await other.post('/api/v1/rail/banks/resolve', {
          bankCode: '058',
          accountNumber: account('330000004').accountNumber,
        })
      ).status,
    ).toBe(200)
  })
})

describe("a payout's own name check (the pipeline's, in a worker)", () => {
  it(
    'fails an outbound transfer to a name the bank does not give with name_mismatch, showing no name on GET or in its callback',
    { timeout: 60_000 },
    async () => {
      const party = await paymentParty(app, hook.url)
      await spendOnResolve(party.client)
      const transfer = await party.client.post<{ id: string }>('/api/v1/rail/outbound', {
        clientReference: randomUUID(),
        amountKobo: 10_000,
        beneficiaryAccountNumber: PAYEE.accountNumber,
        beneficiaryBankCode: PAYEE.bankCode,
        beneficiaryAccountName: 'Test Payee',
        currency: 'NGN',
      })
      expect(transfer.status).toBe(202)
      const read = async () =>
        (await party.client.get<Schemas['OutboundTransfer']>(`/api/v1/rail/outbound/${transfer.body.id}`)).body
      await waitFor(async () => (await read()).state === 'failed', 15_000, 'the transfer failed')
      const failed = await read()
      expect(failed.failureReason).toMatchObject({ code: 'name_mismatch', message: expect.stringMatching(/mismatch/i) })
      expect(failed.settlementAccountName).toBeNull()
      expect(JSON.stringify(failed)).not.toContain(PAYEE.accountName)
      await waitFor(
        () =>
          hook.requests.some(
            (request) => request.rawBody.includes(transfer.body.id) && request.rawBody.includes('"failed"'),
          ),
        15_000,
        'the failed callback',
      )
      for (const request of hook.requests.filter((one) => one.rawBody.includes(transfer.body.id)))
        expect(request.rawBody).not.toContain(PAYEE.accountName)
    },
  )

  it(
    'fails a wallet send to a name the bank does not give with name_mismatch (08), its answer naming no one',
    { timeout: 60_000 },
    async () => {
      const party = await paymentParty(app, hook.url)
      await spendOnResolve(party.client)
      const send = await party.client.post<{ status: string; responseCode: string; responseMessage: string }>(
        '/transfer/bank/customer',
        {
          walletId: party.walletId,
          reference: randomUUID(),
          amountKobo: 5_000,
          currency: 'NGN',
          destinationAccountNumber: PAYEE.accountNumber,
          destinationBankCode: PAYEE.bankCode,
          destinationAccountName: 'Test Payee',
        },
      )
      expect(send.body).toMatchObject({
        status: 'failed',
        responseCode: '08',
        responseMessage: expect.stringMatching(/mismatch/i),
      })
      expect(JSON.stringify(send.body)).not.toContain(PAYEE.accountName)
    },
  )
})
