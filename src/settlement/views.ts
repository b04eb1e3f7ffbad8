// What a settlement reads as (docs/settlement.md "Reading settlements"): its JSON, one with its
// report, and the caller's list.
import type { Pool } from '../platform/db.ts'
import { notFound } from '../platform/errors.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { readPage } from '../platform/read-pool.ts'
import { bankName } from '../collections/virtual-accounts/service.ts'
import * as repo from './repo.ts'
import type { SettlementJson, SettlementWithReportJson } from './schemas.ts'
import type { SettlementState } from './states.ts'

/** Credits a settlement's read shows in its report (creditCount has them all). */
export const REPORT_CREDITS_SHOWN = 1_000

export function toSettlementJson(settlement: repo.Settlement): SettlementJson {
  return {
    id: settlement.id,
    state: settlement.state,
    cycle: settlement.cycle,
    cutoffAt: settlement.cutoffAt.toISOString(),
    amountKobo: settlement.amountKobo,
    currency: settlement.currency,
    creditCount: settlement.creditCount,
    creditsTotalKobo: settlement.creditsTotalKobo,
    destination: { ...settlement.destination, bankName: bankName(settlement.destination.bankCode) },
    outboundTransferId: settlement.outboundTransferId,
    failureReason: settlement.failureReason,
    createdAt: settlement.createdAt.toISOString(),
    stateChangedAt: settlement.stateChangedAt.toISOString(),
  }
}

/** One of the caller's settlements with its report: the credits it included. Anyone else's: 404. */
export async function getSettlement(pool: Pool, partnerId: string, id: string): Promise<SettlementWithReportJson> {
  const settlement = await repo.selectPartnerSettlement(pool, partnerId, id)
  if (!settlement) throw notFound('Settlement')
  const credits = await repo.selectReport(pool, id, REPORT_CREDITS_SHOWN)
  return {
    ...toSettlementJson(settlement),
    report: {
      creditCount: settlement.creditCount,
      creditsTotalKobo: settlement.creditsTotalKobo,
      paidKobo: settlement.amountKobo,
      // paid − the credits' total: negative when a refund held or paid from collections kept part back,
      // positive when money given back to collections (a voided hold) was paid with the cycle.
      adjustmentKobo: settlement.amountKobo - settlement.creditsTotalKobo,
      credits: credits.map((credit) => ({
        creditId: credit.creditId,
        amountKobo: credit.amountKobo,
        collectedAt: credit.collectedAt.toISOString(),
      })),
      creditsShown: credits.length,
    },
  }
}

export async function listSettlements(
  pool: Pool,
  query: { partnerId: string; state?: SettlementState; limit: number; cursor?: string },
): Promise<{ data: SettlementJson[]; nextCursor: string | null }> {
  const rows = await readPage(pool, query.cursor, (reader, before) =>
    repo.selectSettlements(reader, {
      partnerId: query.partnerId,
      state: query.state,
      beforeId: before,
      limit: pageQueryLimit(query.limit),
    }),
  )
  const page = toPage(rows, query.limit)
  return { data: page.items.map(toSettlementJson), nextCursor: page.nextCursor }
}
