// The partner's float: the money outbound transfers draw on (docs/design.md §10). In sandbox it is funded
// from the partner's provider settlement account, as a balanced ledger transfer, by
// `rail sandbox fund-float` and `POST /api/v1/rail/sandbox/fund-float`.
import {
  createTransfers,
  creditRoom,
  derivedId,
  ensurePartnerAccount,
  getBalance,
  LedgerError,
  transferExists,
  type TransferResultCode,
} from '../../ledger/service.ts'
import { getPartner } from '../../partners/service.ts'
import { withTransaction, type Pool, type Queryable } from '../../platform/db.ts'
import { assertAmountWithinLimit } from '../../platform/amounts.ts'
import { fieldError, notFound, RailError } from '../../platform/errors.ts'
import { claimReference, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'

export const FLOAT_CURRENCY = 'NGN'

export interface FloatBalance {
  partnerId: string
  currency: string
  availableBalanceKobo: number
  bookedBalanceKobo: number
}

export interface Funding {
  /** The ledger transfer that moved the money. */
  transferId: string
  amountKobo: number
  /** True when `reference` had already funded the float: nothing moved again. */
  replayed: boolean
  float: FloatBalance
}

/**
 * Funds a sandbox partner's float, once per `reference`: the transfer id is derived from partner
 * and reference, so the same reference moves the money once — a client's retry, or a replay of
 * its signed request — and the same reference with another amount is refused. The reference is
 * required: without one, a replayed request would fund the float again.
 */
export async function fundFloat(
  pool: Pool,
  partnerId: string,
  amountKobo: number,
  reference: string,
  maximumKobo: number,
): Promise<Funding> {
  if (!Number.isSafeInteger(amountKobo) || amountKobo <= 0) throw fieldError('amountKobo', 'must be a positive integer')
  // One funding is one instruction: at most the configured maximum (RAIL_MAX_AMOUNT_KOBO).
  assertAmountWithinLimit(amountKobo, maximumKobo)
  const partner = await getPartner(pool, partnerId)
  if (!partner || partner.environment !== 'sandbox') throw notFound('Sandbox partner')
  const transferId = derivedId(partnerId, `fund_float:${reference}`)
  return withTransaction(pool, async (tx) => {
    const settlement = await ensurePartnerAccount(tx, partnerId, FLOAT_CURRENCY, 'provider_settlement')
    const float = await ensurePartnerAccount(tx, partnerId, FLOAT_CURRENCY, 'float')
    await assertFloatRoom(tx, float, amountKobo, transferId)
    // The funding's ledger transfer claims the reference: its id derives from it, and the ledger
    // answers `exists` for the same transfer again and a refusal for another amount under the id.
    const key = { reference, requestHash: requestHash({ amountKobo, reference }) }
    let ledgerResult: TransferResultCode | undefined
    const claimed = await claimReference(
      FUNDING_REFERENCE,
      key,
      async () => {
        const [outcome] = await createTransfers(tx, [
          {
            id: transferId,
            debitAccountId: settlement,
            creditAccountId: float,
            amountKobo,
            currency: FLOAT_CURRENCY,
            code: 'sandbox_float_funding',
            sourceType: 'sandbox_funding',
            sourceId: reference,
          },
        ])
        ledgerResult = outcome!.result
        return ledgerResult === 'ok' ? { transferId, requestHash: key.requestHash } : undefined
      },
      async () => {
        if (ledgerResult !== 'exists' && !ledgerResult!.startsWith('exists_with_different'))
          throw new LedgerError(ledgerResult!, `transfer ${transferId}: ${ledgerResult}`)
        // The stored funding is this request exactly when the ledger found the same transfer.
        return { transferId, requestHash: ledgerResult === 'exists' ? key.requestHash : 'another request' }
      },
    )
    return {
      transferId,
      amountKobo,
      replayed: claimed.replayed !== undefined,
      float: await floatBalance(tx, partnerId, float),
    }
  })
}

/** How a float funding takes its reference (platform/idempotency.ts): its ledger transfer is the stored funding. */
const FUNDING_REFERENCE: ReferenceKind<{ transferId: string; requestHash: string }> = {
  field: 'reference',
  hashOf: (funding) => funding.requestHash,
  idOf: (funding) => funding.transferId,
}

/**
 * A funding that would take the float's lifetime credits past 2^53 − 1 is refused (its balance
 * could no longer be read exactly); a replay of a funding made before is not a new credit.
 */
async function assertFloatRoom(
  tx: Queryable,
  floatAccountId: string,
  amountKobo: number,
  transferId: string,
): Promise<void> {
  const roomKobo = (await creditRoom(tx, [floatAccountId])).get(floatAccountId) ?? 0
  if (roomKobo >= amountKobo) return
  if (await transferExists(tx, transferId)) return
  throw new RailError('balance_limit_exceeded', `The float can take at most ${roomKobo} kobo more; nothing moved`, {
    roomKobo,
  })
}

async function floatBalance(db: Queryable, partnerId: string, accountId: string): Promise<FloatBalance> {
  const balance = await getBalance(db, accountId)
  return {
    partnerId,
    currency: FLOAT_CURRENCY,
    availableBalanceKobo: balance?.availableKobo ?? 0,
    bookedBalanceKobo: balance?.bookedKobo ?? 0,
  }
}

/** The partner's float balance (zero before its first funding). */
export async function getFloat(pool: Pool, partnerId: string): Promise<FloatBalance> {
  const accountId = await ensurePartnerAccount(pool, partnerId, FLOAT_CURRENCY, 'float')
  return floatBalance(pool, partnerId, accountId)
}
