// Escrow test helpers: an X-API-Key client, and funding through the real collections seam
// (a credit posted to the partner's collections account, then applyEscrowFunding in its transaction).
import { randomUUID } from 'node:crypto'
import { applyEscrowFunding, type ExpiryDeps } from '../../src/escrow/service.ts'
import { systemClock, type Clock } from '../../src/platform/clock.ts'
import type { TestApp } from './app.ts'
import { createTransfer, derivedId, ensurePartnerAccount, getBalance } from '../../src/ledger/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { outboundDeps } from '../../src/money-out/outbound/service.ts'
import { withTransaction, type Pool, type Queryable } from '../../src/platform/db.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'

export interface EscrowResponse<T = Record<string, unknown>> {
  status: number
  headers: Headers
  body: T
}

/** Calls the escrow API with an X-API-Key (or none when apiKey is undefined). */
export function escrowClient(baseUrl: string, apiKey: string | undefined) {
  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    options: { rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<EscrowResponse<T>> {
    const text = options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body))
    const headers: Record<string, string> = {
      ...(apiKey === undefined ? {} : { 'X-API-Key': apiKey }),
      ...(text === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    }
    const response = await fetch(`${baseUrl}/api/v1/escrow/partner${path}`, { method, headers, body: text })
    const raw = await response.text()
    return { status: response.status, headers: response.headers, body: (raw === '' ? undefined : JSON.parse(raw)) as T }
  }
  return {
    create: <T = Record<string, unknown>>(
      body: unknown,
      options?: { rawBody?: string; headers?: Record<string, string> },
    ) => call<T>('POST', '/create', body, options),
    get: <T = Record<string, unknown>>(ref: string) => call<T>('GET', `/${ref}`),
    list: <T = Record<string, unknown>>(query = '') => call<T>('GET', query),
    release: <T = Record<string, unknown>>(ref: string, body?: unknown, options?: { rawBody?: string }) =>
      call<T>('PATCH', `/${ref}/release`, body, options),
    cancel: <T = Record<string, unknown>>(ref: string, body?: unknown, options?: { rawBody?: string }) =>
      call<T>('PATCH', `/${ref}/cancel`, body, options),
    webhook: <T = Record<string, unknown>>(body: unknown) => call<T>('POST', '/webhook', body),
    /** PATCH /:ref/<action> (e.g. `refund`, the retry of a failed refund). */
    patch: <T = Record<string, unknown>>(ref: string, action: string, body?: unknown) =>
      call<T>('PATCH', `/${ref}/${action}`, body),
    call,
  }
}

export type EscrowClient = ReturnType<typeof escrowClient>

/** A valid create request; override any field. */
export function createRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'goods',
    amount: 50_000,
    currency: 'NGN',
    payerEmail: 'payer@example.com',
    recipientEmail: 'recipient@example.com',
    description: 'A used bicycle',
    ...overrides,
  }
}

export async function escrowIdOf(db: Queryable, ref: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM escrows WHERE ref = $1`, [ref])
  if (!rows[0]) throw new Error(`no escrow ${ref}`)
  return rows[0].id
}

/** The account a test payer pays from (at another bank), and the name the sandbox bank answers for it. */
export const TEST_PAYER = {
  accountNumber: nuban('058', '135792468'),
  bankCode: '058',
  accountName: syntheticAccountName('058', nuban('058', '135792468')),
}

/**
 * What the collections credit path does: records the bank's credit to the escrow's funding account
 * (from TEST_PAYER), posts it (provider settlement → collections) and applies it to the escrow, in
 * one transaction. A creditId seen before is the bank's credit announced again.
 */
export async function creditEscrow(
  pool: Pool,
  input: { partnerId: string; ref: string; amountKobo: number; creditId?: string; clock?: Clock },
): Promise<'applied' | 'unmatched'> {
  const creditId = input.creditId ?? randomUUID()
  const escrowId = await escrowIdOf(pool, input.ref)
  return withTransaction(pool, async (tx) => {
    await tx.query(
      `INSERT INTO inbound_credits (id, provider, session_id, account_number, amount_kobo, currency, payer_name, payer_account_number, payer_bank_code,
                                    credited_at, status, partner_id, virtual_account_id, applied_at)
       SELECT $1::uuid, 'sandbox', $1::text, va.account_number, $2, 'NGN', $3, $4, $5, now(), 'applied', e.partner_id, va.id, now()
         FROM escrows e JOIN payment_intents pi ON pi.id = e.funding_payment_intent_id JOIN virtual_accounts va ON va.id = pi.virtual_account_id
        WHERE e.id = $6
       ON CONFLICT DO NOTHING`,
      [creditId, input.amountKobo, TEST_PAYER.accountName, TEST_PAYER.accountNumber, TEST_PAYER.bankCode, escrowId],
    )
    const collectionsAccountId = await ensurePartnerAccount(tx, input.partnerId, 'NGN', 'collections')
    const settlement = await ensurePartnerAccount(tx, input.partnerId, 'NGN', 'provider_settlement')
    await createTransfer(tx, {
      id: derivedId(creditId, 'test_inbound_credit'),
      debitAccountId: settlement,
      creditAccountId: collectionsAccountId,
      amountKobo: input.amountKobo,
      currency: 'NGN',
      code: 'inbound_credit',
      sourceType: 'test_credit',
      sourceId: creditId,
    })
    return applyEscrowFunding({ clock: input.clock ?? systemClock }, tx, {
      escrowId,
      partnerId: input.partnerId,
      amountKobo: input.amountKobo,
      currency: 'NGN',
      creditId,
      collectionsAccountId,
    })
  })
}

export interface EscrowMoney {
  /** Available in the partner's escrow holding account: held for escrows. */
  holdingKobo: number
  /** Held on the escrow holding account for payouts on their way (disbursements, refunds) until the bank answers. */
  payingOutKobo: number
  collectionsKobo: number
  /** The partner's float: where a release without a destination puts the amount. */
  floatKobo: number
}

/** The balances an escrow's money touches (the partner's holding, collections and float are shared by its escrows). */
export async function moneyOf(db: Queryable, partnerId: string, _ref?: string): Promise<EscrowMoney> {
  const balance = async (kind: 'escrow_holding' | 'collections' | 'float') =>
    (await getBalance(db, await ensurePartnerAccount(db, partnerId, 'NGN', kind)))!
  const holding = await balance('escrow_holding')
  return {
    holdingKobo: holding.availableKobo,
    payingOutKobo: holding.bookedKobo - holding.availableKobo,
    collectionsKobo: (await balance('collections')).bookedKobo,
    floatKobo: (await balance('float')).bookedKobo,
  }
}

/** What expiry needs, on a test app (its payouts go to the app's pipeline). */
/**
 * Brings an escrow's expiry to now, so that the expiry job on the real clock finds it due. The
 * escrow's time moves, not the job's clock: the workers that deliver its events and send its
 * refunds judge what is due by the same clock as the job that wrote it (one clock per column).
 */
export async function reachExpiry(pool: Pool, ref: string): Promise<void> {
  await pool.query(
    `UPDATE escrows SET expires_at = greatest(created_at, now() - interval '1 millisecond') WHERE ref = $1`,
    [ref],
  )
}

export function expiryDeps(app: TestApp, clock: Clock = systemClock): ExpiryDeps {
  return {
    pool: app.db.pool,
    clock,
    outbound: outboundDeps({ pool: app.db.pool, allowLoopbackCallbacks: true, payments: app.payments() }),
  }
}
