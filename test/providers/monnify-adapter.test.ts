// The Monnify adapter against the sandbox's Monnify dialect (/sandbox-monnify) over real HTTP:
// one login per token, payouts read in the NIP vocabulary from PENDING to the outcome the settlement
// simulator registers, duplicates answered by the original, faults as unknown, reserved accounts,
// wallets, credits and webhooks. Every call is recorded in provider_calls.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import type { Clock } from '../../src/platform/clock.ts'
import type { RealAdapterOptions } from '../../src/banking/providers/adapter-options.ts'
import { ProviderHttp } from '../../src/banking/providers/http.ts'
import { MonnifyAdapter } from '../../src/banking/providers/monnify/adapter.ts'
import { SandboxAdapter } from '../../src/banking/providers/sandbox-adapter.ts'
import { sandboxMonnifyCredentials } from '../../src/sandbox/dialect-credentials.ts'
import { SANDBOX_MONNIFY_PREFIX, SANDBOX_MONNIFY_PROFILE } from '../../src/sandbox/dialects.ts'
import { writeFaults } from '../../src/sandbox/faults.ts'
import { monnifyMainAccountNumber, monnifySignature } from '../../src/sandbox/monnify/index.ts'
import { SANDBOX_BANK_CODE_DEFAULT } from '../../src/sandbox/service.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

const SECRET = 'monnify-adapter-test-secret'
const CREDENTIALS = sandboxMonnifyCredentials(SECRET)
const NO_FAULTS = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }

let app: TestApp
/** The settlement simulator and the payer of inbound credits: the sandbox bank's own controls. */
let bank: SandboxAdapter
/** The time the adapters read (a token's expiry): moved by a test, never slept on. */
let nowMs = Date.now()
const clock: Clock = { now: () => new Date(nowMs) }

function options(session: Map<string, unknown>, settings: Record<string, string> = {}): RealAdapterOptions {
  return {
    profile: {
      name: SANDBOX_MONNIFY_PROFILE,
      adapter: 'monnify',
      baseUrl: null,
      settings: {
        contractCode: CREDENTIALS.contractCode,
        sourceAccountNumber: monnifyMainAccountNumber(SANDBOX_BANK_CODE_DEFAULT),
        ...settings,
      },
      webhookSourceAddresses: null,
      capabilities: {
        merchantCredit: false,
        debit: false,
        walletTransfer: false,
        bankPayout: true,
        nameCheck: true,
        narration: true,
        virtualAccounts: true,
      },
    },
    baseUrl: `${app.baseUrl}${SANDBOX_MONNIFY_PREFIX}`,
    secrets: { apiKey: CREDENTIALS.apiKey, secretKey: CREDENTIALS.secretKey },
    http: new ProviderHttp({ provider: SANDBOX_MONNIFY_PROFILE, pool: app.db.pool }),
    pool: app.db.pool,
    clock,
    session,
  }
}

const adapterWith = (session = new Map<string, unknown>()) => new MonnifyAdapter(options(session))

async function calls(operation: string, reference?: string): Promise<number> {
  const found = await app.db.pool.query<{ count: string }>(
    `SELECT count(*) FROM provider_calls WHERE provider = $1 AND operation = $2 AND ($3::text IS NULL OR reference = $3)`,
    [SANDBOX_MONNIFY_PROFILE, operation, reference ?? null],
  )
  return Number(found.rows[0]!.count)
}

const payoutTo = (reference: string, amountKobo = 250_075) => ({
  reference,
  amountKobo,
  narration: 'monnify adapter test',
  destinationBankCode: '058',
  destinationAccountNumber: nuban('058', '100200300'),
})

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: SECRET })
  bank = new SandboxAdapter({
    provider: SANDBOX_MONNIFY_PROFILE,
    baseUrl: app.baseUrl,
    secret: SECRET,
    pool: app.db.pool,
  })
})
afterAll(async () => app?.close())

describe('the token', () => {
  it('is asked for once and shared: by concurrent callers, and by every adapter of the profile', async () => {
    const session = new Map<string, unknown>()
    const before = await calls('login')
    await Promise.all(Array.from({ length: 5 }, () => adapterWith(session).requery(randomUUID())))
    await adapterWith(session).requery(randomUUID())
    expect((await calls('login')) - before).toBe(1)
  })

  it('is renewed shortly before it expires, and once when Monnify refuses it', async () => {
    const session = new Map<string, unknown>()
    const adapter = adapterWith(session)
    const before = await calls('login')
    await adapter.requery(randomUUID())
    nowMs += 3_570_000 // within the renewal margin of the dialect's hour
    await adapter.requery(randomUUID())
    expect((await calls('login')) - before).toBe(2)

    // The dialect forgets every token: the next call is refused 401, logs in again and is answered.
    await app.db.pool.query(`DELETE FROM sandbox_bank.monnify_access_tokens`)
    expect(await adapter.requery(randomUUID())).toMatchObject({ outcome: 'pending', responseCode: '25' })
    expect((await calls('login')) - before).toBe(3)
  })

  it('wrong credentials are no answer: unknown, and nothing else is sent', async () => {
    const wrong = new MonnifyAdapter({
      ...options(new Map()),
      secrets: { apiKey: CREDENTIALS.apiKey, secretKey: 'WRONG' },
    })
    const reference = randomUUID()
    expect((await wrong.payout(payoutTo(reference))).outcome).toBe('unknown')
    expect(await calls('payout', reference)).toBe(0)
  })
})

describe('payouts', () => {
  const adapter = () => adapterWith()

  it('is pending until the settlement simulator registers its outcome, then paid by requery', async () => {
    const reference = randomUUID()
    expect(await adapter().payout(payoutTo(reference))).toMatchObject({ outcome: 'pending', responseCode: '09' })
    expect(await adapter().requery(reference)).toMatchObject({ outcome: 'pending', responseCode: '09' })
    expect(await bank.registerPayoutOutcome(reference, 'confirmed')).toMatchObject({ outcome: 'successful' })
    expect(await adapter().requery(reference)).toMatchObject({ outcome: 'successful', responseCode: '00' })
  })

  it('a failure the simulator registers is a final NIP failure', async () => {
    const reference = randomUUID()
    await adapter().payout(payoutTo(reference))
    await bank.registerPayoutOutcome(reference, 'failed')
    const asked = await adapter().requery(reference)
    expect(asked.outcome).toBe('failed')
    expect(asked.outcome === 'failed' && asked.responseCode).toMatch(/^(05|07|51|91)$/)
  })

  it('a resend of a reference is refused as a duplicate and answered with the original, never paid twice', async () => {
    const reference = randomUUID()
    await adapter().payout(payoutTo(reference))
    await bank.registerPayoutOutcome(reference, 'confirmed')
    expect(await adapter().payout(payoutTo(reference))).toMatchObject({ outcome: 'successful', responseCode: '00' })
    const transfers = await app.db.pool.query(`SELECT count(*) FROM sandbox_bank.transfers WHERE reference = $1`, [
      reference,
    ])
    expect(Number(transfers.rows[0].count)).toBe(1)
  })

  it('a reference Monnify never saw is 25, not failed', async () => {
    expect(await adapter().requery(randomUUID())).toMatchObject({ outcome: 'pending', responseCode: '25' })
  })

  it('a 5xx and a lost answer are unknown; the requery then finds what was done', async () => {
    try {
      await writeFaults(app.db.pool, { ...NO_FAULTS, errorRate: 1 })
      const refused = randomUUID()
      expect((await adapter().payout(payoutTo(refused))).outcome).toBe('unknown')
      await writeFaults(app.db.pool, { ...NO_FAULTS, lostResponseRate: 1 })
      const lost = randomUUID()
      expect((await adapter().payout(payoutTo(lost))).outcome).toBe('unknown')
      await writeFaults(app.db.pool, NO_FAULTS)
      expect(await adapter().requery(refused)).toMatchObject({ outcome: 'pending', responseCode: '25' })
      expect(await adapter().requery(lost)).toMatchObject({ outcome: 'pending', responseCode: '09' })
    } finally {
      await writeFaults(app.db.pool, NO_FAULTS)
    }
  })

  it("a wallet's payout from an empty wallet fails for funds (51)", async () => {
    const wallet = await adapter().createWallet({
      customerReference: `cust-${randomUUID()}`,
      accountName: 'EMPTY WALLET',
    })
    if (wallet.outcome !== 'successful') throw new Error(`wallet not opened: ${JSON.stringify(wallet)}`)
    const sent = await adapter().sendToBank({
      ...payoutTo(randomUUID()),
      fromAccountNumber: wallet.value.accountNumber,
    })
    expect(sent).toMatchObject({ outcome: 'failed', responseCode: '51' })
  })

  it('the balance of the source account is read in kobo', async () => {
    const balance = await adapter().balance()
    expect(balance.outcome).toBe('successful')
    expect(balance.outcome === 'successful' && Number.isSafeInteger(balance.value.balanceKobo)).toBe(true)
  })

  it('what Monnify cannot do for wallets is 58, without a call', async () => {
    const before = await calls('credit')
    expect(await adapter().credit()).toMatchObject({ outcome: 'failed', responseCode: '58' })
    expect(await adapter().debit()).toMatchObject({ outcome: 'failed', responseCode: '58' })
    expect(await adapter().walletTransfer()).toMatchObject({ outcome: 'failed', responseCode: '58' })
    expect(await calls('credit')).toBe(before)
  })
})

describe('accounts', () => {
  const adapter = () => adapterWith()

  it('name enquiry answers the holder, or 07 for an account that is not one', async () => {
    const found = await adapter().nameEnquiry({ bankCode: '058', accountNumber: nuban('058', '100200300') })
    expect(found.outcome === 'successful' && found.value.accountName).toMatch(/^[A-Z]+ [A-Z]+$/)
    expect(await adapter().nameEnquiry({ bankCode: '058', accountNumber: '1234567890' })).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
  })

  it('a wallet is opened once per reference: asked again, the same account; for another name, 26', async () => {
    const reference = randomUUID()
    const opened = await adapter().createWallet({ customerReference: 'cust-1', reference, accountName: 'ADA OBI' })
    expect(opened).toMatchObject({
      outcome: 'successful',
      value: { bankCode: SANDBOX_BANK_CODE_DEFAULT, accountName: 'ADA OBI' },
    })
    const again = await adapter().createWallet({ customerReference: 'cust-1', reference, accountName: 'ADA OBI' })
    expect(again.outcome === 'successful' && opened.outcome === 'successful' && again.value.accountNumber).toBe(
      opened.outcome === 'successful' && opened.value.accountNumber,
    )
    expect(
      await adapter().createWallet({ customerReference: 'cust-2', reference, accountName: 'CHIDI EZE' }),
    ).toMatchObject({ outcome: 'failed', responseCode: '26' })
  })

  it("a wallet's credits are listed from its transactions", async () => {
    const wallet = await adapter().createWallet({
      customerReference: `cust-${randomUUID()}`,
      accountName: 'FUNDED WALLET',
    })
    if (wallet.outcome !== 'successful') throw new Error(`wallet not opened: ${JSON.stringify(wallet)}`)
    const { accountNumber } = wallet.value
    expect(await adapter().listCredits(accountNumber)).toMatchObject({ outcome: 'successful', value: [] })
    expect(
      (await bank.simulateInboundCredit({ accountNumber, amountKobo: 99_999, payerName: 'CHIDI EZE' })).outcome,
    ).toBe('successful')
    const listed = await adapter().listCredits(accountNumber)
    expect(listed).toMatchObject({
      outcome: 'successful',
      value: [{ accountNumber, amountKobo: 99_999, currency: 'NGN', accountReference: null }],
    })
  })

  it('a reserved account: allocated once per reference, its credits listed since a time, and deallocated', async () => {
    const { credentials } = await app.newPartner()
    const reference = `${credentials.partnerId}.${randomBytes(14).toString('hex').slice(0, 27)}`
    const allocated = await adapter().allocateVirtualAccount({ reference, accountName: 'ADA OBI COLLECTIONS' })
    if (allocated.outcome !== 'successful') throw new Error(`not allocated: ${JSON.stringify(allocated)}`)
    expect(allocated).toMatchObject({ providerReference: reference, value: { bankCode: SANDBOX_BANK_CODE_DEFAULT } })
    expect(await adapter().allocateVirtualAccount({ reference, accountName: 'ADA OBI COLLECTIONS' })).toMatchObject({
      outcome: 'successful',
      value: allocated.value,
    })

    // Rail keeps the account with the reference the adapter answered (collections do it; here by hand).
    const { accountNumber } = allocated.value
    await app.db.pool.query(
      `INSERT INTO virtual_accounts (id, partner_id, tracking_id, purpose, provider, provider_channel, provider_reference, bank_code, account_number, account_name, currency, creator_metadata)
       VALUES ($1, $2, $3, 'persistent', $4, 'bank_transfer', $5, $6, $7, $8, 'NGN', '{}')`,
      [
        randomUUID(),
        credentials.partnerId,
        `trk_${randomBytes(12).toString('hex')}`,
        SANDBOX_MONNIFY_PROFILE,
        reference,
        allocated.value.bankCode,
        accountNumber,
        allocated.value.accountName,
      ],
    )
    const paid = await bank.simulateInboundCredit({
      accountNumber,
      amountKobo: 150_050,
      payerName: 'CHIDI EZE',
      payerAccountNumber: nuban('058', '100200301'),
      payerBankCode: '058',
    })
    expect(paid.outcome).toBe('successful')

    const listed = await adapter().listCredits(accountNumber)
    if (listed.outcome !== 'successful') throw new Error(`not listed: ${JSON.stringify(listed)}`)
    expect(listed.value).toHaveLength(1)
    expect(listed.value[0]).toMatchObject({
      accountNumber,
      amountKobo: 150_050,
      currency: 'NGN',
      payerName: 'CHIDI EZE',
      payerBankCode: '058',
      accountReference: reference,
    })
    const creditedAtMs = listed.value[0]!.creditedAt.getTime()
    expect(Math.abs(creditedAtMs - Date.now())).toBeLessThan(5 * 60_000)
    expect(await adapter().listCredits(accountNumber, new Date(creditedAtMs + 1))).toMatchObject({
      outcome: 'successful',
      value: [],
    })

    expect(await adapter().archiveVirtualAccount(accountNumber)).toMatchObject({ outcome: 'successful' })
    expect(await adapter().archiveVirtualAccount(accountNumber)).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
    expect(await adapter().archiveVirtualAccount('0000000000')).toMatchObject({ outcome: 'failed', responseCode: '07' })
  })
})

describe('webhooks', () => {
  it('reads a notice signed with the client secret, and refuses one signed otherwise or tampered with', () => {
    const reference = randomUUID()
    const rawBody = JSON.stringify({
      eventType: 'SUCCESSFUL_DISBURSEMENT',
      eventData: { reference, amount: 2500.75, status: 'SUCCESS' },
    })
    const headers = { 'monnify-signature': monnifySignature(rawBody, CREDENTIALS.secretKey) }
    const adapter = adapterWith()
    expect(adapter.readWebhook({ pathWithQuery: '/providers/sandbox-monnify/webhooks', headers, rawBody })).toEqual({
      kind: 'transfer',
      reference,
      event: 'success',
    })
    expect(
      adapter.readWebhook({ pathWithQuery: '/', headers, rawBody: rawBody.replace('2500.75', '2500.76') }),
    ).toEqual({ kind: 'unauthorized' })
    expect(
      adapter.readWebhook({
        pathWithQuery: '/',
        headers: { 'monnify-signature': monnifySignature(rawBody, 'another secret') },
        rawBody,
      }),
    ).toEqual({ kind: 'unauthorized' })
    const allowlisted = new MonnifyAdapter({
      ...options(new Map()),
      profile: { ...options(new Map()).profile, webhookSourceAddresses: ['35.242.133.146'] },
    })
    expect(allowlisted.readWebhook({ pathWithQuery: '/', headers, rawBody, sourceAddress: '127.0.0.1' })).toEqual({
      kind: 'unauthorized',
    })
    expect(
      allowlisted.readWebhook({ pathWithQuery: '/', headers, rawBody, sourceAddress: '35.242.133.146' }).kind,
    ).toBe('transfer')
  })
})
