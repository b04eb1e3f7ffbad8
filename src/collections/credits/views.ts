// How inbound credits read to a partner: a credit (confirmed once applied), a triage item, the
// account behind a BRR, and the partner's credits (the dashboard's collections pages).
import type { Queryable } from '../../platform/db.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import { bankName, selectById as selectAccountById, type VirtualAccount } from '../virtual-accounts/service.ts'
import * as repo from './repo.ts'
import type { BrrAccountJson, InboundCreditJson, UnmatchedCreditJson } from './schemas.ts'

/** A credit's status as a partner reads it: confirmed once applied. */
export function creditLifecycle(status: repo.CreditStatus): string {
  return status === 'applied' ? 'confirmed' : status
}

export function toCreditJson(credit: repo.InboundCredit): InboundCreditJson {
  return {
    id: credit.id,
    status: creditLifecycle(credit.status),
    brr: credit.brr,
    amountKobo: credit.amountKobo,
    currency: credit.currency,
    virtualAccount: credit.accountNumber,
    sessionId: credit.sessionId,
    payer: { name: credit.payerName, accountNumber: credit.payerAccountNumber, bankCode: credit.payerBankCode },
    narration: credit.narration,
    creditedAt: credit.creditedAt.toISOString(),
    receivedAt: credit.receivedAt.toISOString(),
  }
}

export async function toTriageJson(db: Queryable, credit: repo.InboundCredit): Promise<UnmatchedCreditJson> {
  const account = credit.virtualAccountId ? await selectAccountById(db, credit.virtualAccountId) : undefined
  return {
    ...toCreditJson(credit),
    status: credit.status as 'unmatched' | 'refund_pending' | 'refunded' | 'assigned',
    reason: credit.unmatchedReason ?? '',
    trackingId: account?.trackingId ?? null,
    walletId: credit.walletId,
    resolution: credit.resolution,
    resolvedAt: credit.resolvedAt?.toISOString() ?? null,
  }
}

export function toBrrAccount(account: VirtualAccount): BrrAccountJson {
  return {
    trackingId: account.trackingId,
    reference: account.reference,
    purpose: account.purpose,
    status: account.status,
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    bankCode: account.bankCode,
    bankName: bankName(account.bankCode),
    brr: account.brr,
  }
}

/** A partner's credits, newest first (optionally of one status or one virtual account), a page at a time. */
export async function listCredits(
  db: Queryable,
  query: { partnerId: string; status?: repo.CreditStatus; virtualAccountId?: string; limit: number; cursor?: string },
) {
  const page = toPage(
    await readPage(db, query.cursor, (reader, before) =>
      repo.listByPartner(reader, { ...query, cursor: before, limit: pageQueryLimit(query.limit) }),
    ),
    query.limit,
  )
  return { credits: page.items, nextCursor: page.nextCursor }
}

/** One of the partner's credits; undefined when it is not the partner's. */
export async function getCredit(db: Queryable, partnerId: string, id: string): Promise<repo.InboundCredit | undefined> {
  return repo.selectCredit(db, partnerId, id)
}

/** What the partner received in [from, before): credits, their total, and how many await triage. */
export async function receivedVolume(db: Queryable, partnerId: string, from: Date, before: Date) {
  return repo.selectReceivedVolume(db, partnerId, from, before)
}
