// Balances and statements of a partner's accounts, read from the ledger (docs/statements.md): a
// wallet's, the float's and collections'. A statement is the account's booked movements newest
// first, each with the booked balance after it; a hold shows as a line only when it posts.
import {
  bookedBalanceAt,
  lineRangeSequences,
  NO_UPPER_SEQUENCE,
  partnerAccountFigures,
  partnerAccountId,
  pendingHolds,
  type AccountFigures,
  type AccountKind,
} from '../ledger/service.ts'
import { FLOAT_CURRENCY, inFlightHoldIds } from '../money-out/outbound/service.ts'
import { readSnapshot, type Queryable } from '../platform/db.ts'
import { fieldError } from '../platform/errors.ts'
import { findWallet } from '../wallets/service.ts'
import { causeOf, type Cause } from './causes.ts'
import { selectLines, type LineRow } from './lines.ts'

export type StatementAccountType = 'wallet' | 'float' | 'collections'

export interface StatementAccount {
  type: StatementAccountType
  /** The wallet's id on a wallet statement; absent for the float and collections. */
  walletId?: string
  currency: string
  /** The ledger account, or none yet (nothing ever moved on it: an empty statement). */
  ledgerAccountId: string | null
}

export interface StatementQuery {
  /** Inclusive: lines posted at or after it. */
  from?: Date
  /** Exclusive: lines posted before it. */
  to?: Date
  limit: number
  cursor?: string
}

export interface StatementLine {
  id: string
  postedAt: Date
  cause: Cause
  direction: 'credit' | 'debit'
  amountKobo: number
  balanceAfterKobo: number
  /** The business object behind the line; `reference` where the partner knows it by another handle than its id. */
  object: { type: string; id: string; reference: string | null } | null
  narration: string | null
}

export interface StatementPage {
  account: StatementAccount
  /** The booked balance before the page's oldest line, and after its newest: opening + lines = closing. */
  openingBalanceKobo: number
  closingBalanceKobo: number
  lines: StatementLine[]
  nextCursor: string | null
}

export const STATEMENT_PAGE_MAX = 500
export const STATEMENT_PAGE_DEFAULT = 20

export async function walletStatementAccount(
  db: Queryable,
  partnerId: string,
  walletId: string,
): Promise<StatementAccount> {
  const wallet = await findWallet(db, partnerId, walletId)
  return { type: 'wallet', walletId: wallet.id, currency: wallet.currency, ledgerAccountId: wallet.ledgerAccountId }
}

/** The float or collections account; a partner that never used it has an empty statement (never made here: a read changes nothing). */
export async function partnerStatementAccount(
  db: Queryable,
  partnerId: string,
  type: 'float' | 'collections',
): Promise<StatementAccount> {
  const ledgerAccountId = (await partnerAccountId(db, partnerId, FLOAT_CURRENCY, type)) ?? null
  return { type, currency: FLOAT_CURRENCY, ledgerAccountId }
}

export async function statementPage(
  db: Queryable,
  account: StatementAccount,
  query: StatementQuery,
): Promise<StatementPage> {
  checkRange(query)
  const below = query.cursor === undefined ? NO_UPPER_SEQUENCE : decodeCursor(query.cursor)
  const accountId = account.ledgerAccountId
  if (accountId === null) return { account, openingBalanceKobo: 0, closingBalanceKobo: 0, lines: [], nextCursor: null }
  const range = await sequenceRange(db, accountId, query)
  const highest = Math.min(range.highest, below - 1)
  const rows = range.lowest > highest ? [] : await selectLines(db, accountId, range.lowest, highest, query.limit + 1)
  const lines = rows.slice(0, query.limit).map(toLine)
  const nextCursor = rows.length > query.limit ? encodeCursor(rows[query.limit - 1]!.sequence) : null
  if (lines.length === 0) {
    const balance = await bookedBalanceAt(db, accountId, highest)
    return { account, openingBalanceKobo: balance, closingBalanceKobo: balance, lines, nextCursor }
  }
  const oldest = lines[lines.length - 1]!
  return {
    account,
    openingBalanceKobo: oldest.balanceAfterKobo - signedKobo(oldest),
    closingBalanceKobo: lines[0]!.balanceAfterKobo,
    lines,
    nextCursor,
  }
}

function checkRange(query: StatementQuery): void {
  if (query.from && query.to && query.from.getTime() >= query.to.getTime())
    throw fieldError('from', 'must be earlier than to (from is inclusive, to exclusive)')
}

/**
 * The range as the account's sequence bounds: from its first line posted at or after `from` to its
 * last line posted before `to`. A range is so always a contiguous run of the account's lines, and
 * its balances chain (docs/statements.md, "Ranges").
 */
async function sequenceRange(
  db: Queryable,
  accountId: string,
  query: StatementQuery,
): Promise<{ lowest: number; highest: number }> {
  if (!query.from && !query.to) return { lowest: 0, highest: NO_UPPER_SEQUENCE }
  const found = await lineRangeSequences(db, accountId, query.from ?? EARLIEST, query.to ?? LATEST)
  // No line before `to`: the range ends before the first line. No line from `from` on: it starts after the last.
  const highest = query.to ? (found.last ?? 0) : NO_UPPER_SEQUENCE
  const lowest = query.from ? (found.first ?? NO_UPPER_SEQUENCE) : 0
  return { lowest, highest }
}

// Stand-ins for a bound not given (its probe's answer is then not used).
const EARLIEST = new Date('1970-01-01T00:00:00Z')
const LATEST = new Date('9999-12-31T00:00:00Z')

function toLine(row: LineRow): StatementLine {
  return {
    id: row.id,
    postedAt: row.postedAt,
    cause: causeOf(row),
    direction: row.isCredit ? 'credit' : 'debit',
    amountKobo: row.amountKobo,
    balanceAfterKobo: row.bookedAfterKobo,
    object:
      row.sourceType && row.sourceId
        ? { type: row.sourceType, id: row.sourceId, reference: row.objectReference }
        : null,
    narration: row.narration,
  }
}

function signedKobo(line: StatementLine): number {
  return line.direction === 'credit' ? line.amountKobo : -line.amountKobo
}

// The cursor is opaque to partners: the ledger sequence of the last line shown, in base64url.
const CURSOR_TEXT = /^s([1-9][0-9]{0,15})$/

function encodeCursor(sequence: number): string {
  return Buffer.from(`s${sequence}`).toString('base64url')
}

function decodeCursor(cursor: string): number {
  const match = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
  const sequence = match ? Number(match[1]) : NaN
  // Only a cursor this endpoint gave decodes to itself again.
  if (!Number.isSafeInteger(sequence) || encodeCursor(sequence) !== cursor)
    throw fieldError('cursor', 'is not a cursor this statement gave')
  return sequence
}

export interface PartnerBalances {
  currency: string
  float: { availableKobo: number; bookedKobo: number }
  collections: { awaitingSettlementKobo: number; bookedKobo: number }
  escrow: { heldKobo: number; bookedKobo: number }
  pendingPayouts: { count: number; amountKobo: number }
}

/** The partner accounts the balances show. */
const BALANCE_KINDS: readonly AccountKind[] = ['float', 'collections', 'escrow_holding']

/**
 * The partner's balances, in one snapshot (readSnapshot): the ledger's figures of its accounts and
 * its payouts in flight agree. Each named figure is what the account holds and is not on its way
 * out (booked less the holds of payouts in flight from it); those payouts — not final, their hold
 * still pending in the ledger — are counted in pendingPayouts.
 */
export async function partnerBalances(db: Queryable, partnerId: string): Promise<PartnerBalances> {
  const { accounts, inFlight } = await readSnapshot(db, async (reader) => ({
    accounts: await partnerAccountFigures(reader, partnerId, FLOAT_CURRENCY, BALANCE_KINDS),
    inFlight: await pendingHolds(reader, await inFlightHoldIds(reader, partnerId, FLOAT_CURRENCY)),
  }))
  const figures = (account: AccountFigures | undefined) => account ?? { availableKobo: 0, bookedKobo: 0 }
  const float = figures(accounts.float)
  const collections = figures(accounts.collections)
  const escrow = figures(accounts.escrow_holding)
  return {
    currency: FLOAT_CURRENCY,
    float: { availableKobo: float.availableKobo, bookedKobo: float.bookedKobo },
    collections: { awaitingSettlementKobo: collections.availableKobo, bookedKobo: collections.bookedKobo },
    escrow: { heldKobo: escrow.availableKobo, bookedKobo: escrow.bookedKobo },
    pendingPayouts: { count: inFlight.count, amountKobo: inFlight.amountKobo },
  }
}
