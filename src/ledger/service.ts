// The ledger's API. Every function takes the caller's connection: inside a transaction, the
// transfers commit or roll back with the business change that caused them, its event and its
// jobs (the one write path). Facts are asserted here before the write; the database function
// checks balances on the locked rows, and the CHECK constraints of ledger_accounts check them
// again in the very statement that writes the new totals.
import { createHash } from 'node:crypto'
import type { Pool, Queryable } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import * as lines from './lines-repo.ts'
import * as repo from './repo.ts'
import {
  LedgerError,
  PARTNER_SINGLETON_KINDS,
  type AccountBalance,
  type AccountKind,
  type AccountStatus,
  type TransferInput,
  type TransferResult,
  type TransferResultCode,
} from './types.ts'

export * from './types.ts'
export type { AvailableAccount, StatementRow } from './repo.ts'
// An account's lines and figures as statements read them (the statements feature pages and
// sums them; the ledger's tables are read only here).
export type { AccountFigures, LedgerLine } from './lines-repo.ts'
export { NO_UPPER_SEQUENCE } from './lines-repo.ts'

/** Transfers in one call; more is a programming error (split the batch). */
export const TRANSFERS_PER_CALL_MAX = 8_190
/** Longest reservation a pending transfer may carry: 30 days. */
export const PENDING_TIMEOUT_MAX_S = 30 * 24 * 60 * 60
export const STATEMENT_PAGE_MAX = 500
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CURRENCY = /^[A-Z]{3}$/
const CODE = /^[a-z][a-z0-9_]{0,63}$/

export interface NewAccountInput {
  partnerId: string | null
  currency: string
  kind: AccountKind
  /** Customer wallets: never overdrawn. */
  debitsMustNotExceedCredits?: boolean
  creditsMustNotExceedDebits?: boolean
}

export async function createAccount(db: Queryable, input: NewAccountInput): Promise<string> {
  assertAccountInput(input)
  if (PARTNER_SINGLETON_KINDS.includes(input.kind))
    throw new Error(`${input.kind} accounts are made by ensurePartnerAccount`)
  const id = uuidv7()
  await repo.insertAccount(db, { id, ...accountFlags(input) })
  return id
}

/** The partner's one account of a singleton kind (float, collections, …) in a currency; made on first use. */
export async function ensurePartnerAccount(
  db: Queryable,
  partnerId: string,
  currency: string,
  kind: AccountKind,
): Promise<string> {
  const input: NewAccountInput = { partnerId, currency, kind, debitsMustNotExceedCredits: mustNotOverdraw(kind) }
  assertAccountInput(input)
  if (!PARTNER_SINGLETON_KINDS.includes(kind)) throw new Error(`${kind} is not a per-partner account kind`)
  return repo.upsertPartnerAccount(db, { id: uuidv7(), ...accountFlags(input) })
}

const committedPartnerAccounts = new Map<string, string>()

/**
 * The id of a partner's account of one kind, made in autocommit if it is missing, and remembered
 * by this process: a committed account never changes its id or goes away, so a hot path (a batch
 * of submits) pays no look-up for it. Only an id read in autocommit is remembered — one made inside
 * a caller's transaction could still roll back.
 */
export async function committedPartnerAccount(
  pool: Pool,
  partnerId: string,
  currency: string,
  kind: AccountKind,
): Promise<string> {
  const key = `${partnerId}:${currency}:${kind}`
  let id = committedPartnerAccounts.get(key)
  if (id === undefined) {
    id = await ensurePartnerAccount(pool, partnerId, currency, kind)
    committedPartnerAccounts.set(key, id)
  }
  return id
}

/**
 * Money the partner holds with us may not go below zero: float, collections, escrow holding and
 * fees are only ever spent from what came in. Provider settlement and suspense mirror money
 * outside the rail and may run either way.
 */
function mustNotOverdraw(kind: AccountKind): boolean {
  return kind === 'float' || kind === 'collections' || kind === 'escrow_holding' || kind === 'fees' || kind === 'wallet'
}

function accountFlags(input: NewAccountInput): Omit<repo.NewAccount, 'id'> {
  return {
    partnerId: input.partnerId,
    currency: input.currency,
    kind: input.kind,
    debitsMustNotExceedCredits: input.debitsMustNotExceedCredits ?? false,
    creditsMustNotExceedDebits: input.creditsMustNotExceedDebits ?? false,
  }
}

function assertAccountInput(input: NewAccountInput): void {
  if (!CURRENCY.test(input.currency)) throw new Error(`currency ${input.currency} is not an ISO 4217 code`)
  if (input.debitsMustNotExceedCredits && input.creditsMustNotExceedDebits)
    throw new Error('an account takes at most one balance flag')
}

/** Freezes, reopens or closes an account. Closed is for good: reopening a closed account throws. */
export async function setAccountStatus(db: Queryable, accountId: string, status: AccountStatus): Promise<void> {
  const previous = await repo.updateAccountStatus(db, accountId, status)
  if (previous === undefined) throw new Error(`ledger account ${accountId} not found`)
  if (previous === 'closed' && status !== 'closed') throw new Error(`ledger account ${accountId} is closed for good`)
}

/**
 * Takes, in the caller's transaction, the lock a transfer takes on the account's row. A change that
 * will move money on an account, and that may meet another transaction moving money on it and then
 * locking a row of its own domain, takes it first, so that both lock in one order (no deadlock).
 */
export async function lockLedgerAccount(db: Queryable, accountId: string): Promise<void> {
  await repo.lockAccount(db, accountId)
}

/**
 * Creates transfers in order, one result per transfer. Unlinked, each succeeds or fails on its
 * own; linked, all succeed or none is written. Invalid input is refused here, without a query.
 */
export async function createTransfers(
  db: Queryable,
  transfers: readonly TransferInput[],
  options: { linked?: boolean } = {},
): Promise<TransferResult[]> {
  return applyTransfers(db, transfers, chainFlags(transfers.length, options.linked ?? false))
}

/** `linkedWithNext` flags for `count` transfers: one chain of all of them, or none. */
export function chainFlags(count: number, linked: boolean): boolean[] {
  return Array.from({ length: count }, (_unused, index) => linked && index < count - 1)
}

/**
 * The general form (what the batcher uses to put many callers' requests into one call):
 * `linkedWithNext[i]` chains transfer i to the next, and each chain succeeds or fails whole.
 */
export async function applyTransfers(
  db: Queryable,
  transfers: readonly TransferInput[],
  linkedWithNext: readonly boolean[],
): Promise<TransferResult[]> {
  if (transfers.length === 0) return []
  if (transfers.length > TRANSFERS_PER_CALL_MAX) throw new Error(`at most ${TRANSFERS_PER_CALL_MAX} transfers per call`)
  if (linkedWithNext.length !== transfers.length) throw new Error('one linked flag per transfer')
  // As in TigerBeetle (linked_event_chain_open): the last transfer must close its chain, or the
  // caller meant a chain longer than what it sent.
  if (linkedWithNext[linkedWithNext.length - 1])
    throw new Error('linked chain left open: the last transfer must not link to a next one')
  const results: (TransferResultCode | undefined)[] = transfers.map(validateTransfer)
  // A chain with a malformed member fails whole here; malformed unlinked transfers fail alone.
  for (const [start, end] of chains(linkedWithNext)) {
    const refused = results.slice(start, end + 1).some((code) => code !== undefined)
    if (refused && end > start) for (let i = start; i <= end; i++) results[i] ??= 'linked_event_failed'
  }
  const sendIndexes = results.flatMap((code, index) => (code === undefined ? [index] : []))
  if (sendIndexes.length > 0) {
    const applied = await repo.callCreateTransfers(
      db,
      sendIndexes.map((index) => transfers[index]!),
      sendIndexes.map((index) => linkedWithNext[index]!),
    )
    sendIndexes.forEach((index, position) => (results[index] = applied[position]))
  }
  return transfers.map((transfer, index) => ({ id: transfer.id, result: results[index]! }))
}

/** [start, end] index pairs of each chain (an unlinked transfer is a chain of one). */
function chains(linkedWithNext: readonly boolean[]): [number, number][] {
  const found: [number, number][] = []
  let start = 0
  for (let index = 0; index < linkedWithNext.length; index++) {
    if (!linkedWithNext[index]) {
      found.push([start, index])
      start = index + 1
    }
  }
  if (start < linkedWithNext.length) found.push([start, linkedWithNext.length - 1])
  return found
}

/** One transfer; a result other than ok/exists is thrown as a LedgerError. */
export async function createTransfer(db: Queryable, transfer: TransferInput): Promise<TransferResultCode> {
  const [outcome] = await createTransfers(db, [transfer])
  if (outcome!.result !== 'ok' && outcome!.result !== 'exists')
    throw new LedgerError(outcome!.result, `transfer ${transfer.id}: ${outcome!.result}`)
  return outcome!.result
}

/** The refusal code of a malformed transfer, or undefined when it is well-formed. */
export function validateTransfer(transfer: TransferInput): TransferResultCode | undefined {
  const phase = transfer.phase ?? 'single'
  if (typeof transfer.id !== 'string' || !UUID.test(transfer.id)) return 'id_must_be_uuid'
  if (!['single', 'pending', 'post', 'void'].includes(phase)) return 'phase_invalid'
  if (typeof transfer.code !== 'string' || !CODE.test(transfer.code)) return 'code_must_be_snake_case'
  const isNew = phase === 'single' || phase === 'pending'
  if (isNew && (transfer.debitAccountId === undefined || transfer.creditAccountId === undefined))
    return 'accounts_required'
  for (const accountId of [transfer.debitAccountId, transfer.creditAccountId, transfer.pendingId]) {
    if (accountId !== undefined && !UUID.test(accountId)) return 'id_must_be_uuid'
  }
  if (isNew && transfer.pendingId !== undefined) return 'pending_id_not_allowed'
  if (!isNew && transfer.pendingId === undefined) return 'pending_id_required'
  if (isNew || transfer.amountKobo !== undefined) {
    const amount = transfer.amountKobo
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0)
      return 'amount_must_be_positive_safe_integer'
  }
  if (isNew || transfer.currency !== undefined) {
    if (typeof transfer.currency !== 'string' || !CURRENCY.test(transfer.currency)) return 'currency_must_be_iso_4217'
  }
  if (transfer.timeoutS !== undefined) {
    if (phase !== 'pending') return 'timeout_only_for_pending'
    if (!Number.isInteger(transfer.timeoutS) || transfer.timeoutS <= 0 || transfer.timeoutS > PENDING_TIMEOUT_MAX_S)
      return 'timeout_invalid'
  }
  return undefined
}

export async function getBalance(db: Queryable, accountId: string): Promise<AccountBalance | undefined> {
  const [balance] = await repo.selectBalances(db, [accountId])
  return balance
}

/**
 * How many more kobo each account can be credited while its totals stay exact in JavaScript
 * (lifetime credits ≤ 2^53 − 1). Callers that concentrate money in one account (funding the
 * float, settling collections to it) check it first, so that no balance read of it can fail.
 */
export async function creditRoom(db: Queryable, accountIds: readonly string[]): Promise<Map<string, number>> {
  return repo.selectCreditRoom(db, accountIds)
}

/** Whether a transfer with this id was made (a retry of it finds `exists`). */
export async function transferExists(db: Queryable, transferId: string): Promise<boolean> {
  return repo.selectTransferExists(db, transferId)
}

/** Partners' collections accounts with money available, at most `limit`: all but the excluded partners', or one partner's. */
export async function collectionsWithAvailable(
  db: Queryable,
  limit: number,
  excludedPartnerIds: readonly string[],
  partnerId: string | null,
): Promise<repo.AvailableAccount[]> {
  return repo.selectCollectionsWithAvailable(db, limit, excludedPartnerIds, partnerId)
}

export async function getBalances(db: Queryable, accountIds: string[]): Promise<AccountBalance[]> {
  return repo.selectBalances(db, accountIds)
}

export interface StatementPage {
  entries: repo.StatementRow[]
  /** Pass back to get the next page; null when this page is the last. */
  nextCursor: string | null
}

/** An account's transfers, oldest first, each with the account's balances right after it. */
export async function getStatement(
  db: Queryable,
  accountId: string,
  options: { cursor?: string | null; limit?: number } = {},
): Promise<StatementPage> {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), STATEMENT_PAGE_MAX)
  const afterSequence = options.cursor ? decodeCursor(options.cursor) : 0
  const entries = await repo.selectStatement(db, accountId, afterSequence, limit + 1)
  const page = entries.slice(0, limit)
  const last = page.at(-1)
  return { entries: page, nextCursor: entries.length > limit && last ? encodeCursor(last.sequence) : null }
}

function encodeCursor(sequence: number): string {
  return Buffer.from(`seq:${sequence}`).toString('base64url')
}

function decodeCursor(cursor: string): number {
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!match)
    throw new RailError('validation_error', 'cursor: not a cursor this statement issued', {
      fields: [{ field: 'cursor', message: 'is invalid' }],
    })
  return Number(match[1])
}

/** Batch size of one sweep of timed-out pending transfers. */
const EXPIRY_SWEEP_BATCH = 500

/**
 * Voids pending transfers whose timeout has passed. The void's id is derived from the pending
 * transfer's, so two sweeps racing on one transfer make one void between them.
 */
export async function voidTimedOutPendingTransfers(db: Queryable): Promise<number> {
  const pendingIds = await repo.selectTimedOutPendingIds(db, EXPIRY_SWEEP_BATCH)
  if (pendingIds.length === 0) return 0
  const voids = pendingIds.map((pendingId) => ({
    id: derivedId(pendingId, 'timeout'),
    phase: 'void' as const,
    pendingId,
    code: 'pending_transfer_timeout',
  }))
  const results = await createTransfers(db, voids)
  return results.filter((outcome) => outcome.result === 'ok').length
}

/** A UUID (v8 layout) derived from another id and a purpose: the same inputs give the same id. */
export function derivedId(id: string, purpose: string): string {
  const hex = createHash('sha256').update(`${id}:${purpose}`).digest('hex').slice(0, 32).split('')
  hex[12] = '8'
  hex[16] = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  const h = hex.join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** The partner's account of this kind and currency, if it was ever made (a read makes none). */
export function partnerAccountId(
  db: Queryable,
  partnerId: string,
  currency: string,
  kind: AccountKind,
): Promise<string | undefined> {
  return lines.selectPartnerAccountId(db, partnerId, currency, kind)
}

/** The partner's accounts of these kinds in one currency: booked and available, by kind (an account never made is absent). */
export function partnerAccountFigures(
  db: Queryable,
  partnerId: string,
  currency: string,
  kinds: readonly AccountKind[],
): Promise<Partial<Record<AccountKind, lines.AccountFigures>>> {
  return lines.selectPartnerFigures(db, partnerId, currency, kinds)
}

/** The sequences of the account's first line posted at or after `from` and of its last line posted before `to` (null: none). */
export function lineRangeSequences(
  db: Queryable,
  accountId: string,
  from: Date,
  to: Date,
): Promise<{ first: number | null; last: number | null }> {
  return lines.selectRangeSequences(db, accountId, from, to)
}

/** The account's lines with `lowest` <= sequence <= `highest`, newest first, at most `limit`. */
export function accountLines(
  db: Queryable,
  accountId: string,
  lowest: number,
  highest: number,
  limit: number,
): Promise<lines.LedgerLine[]> {
  return lines.selectLines(db, accountId, lowest, highest, limit)
}

/** The account's booked balance after its last line with sequence <= `highest` (0 before its first). */
export function bookedBalanceAt(db: Queryable, accountId: string, highest: number): Promise<number> {
  return lines.selectBookedAt(db, accountId, highest)
}

/** How many of these transfers are holds still pending, and what they hold, in kobo. */
export function pendingHolds(
  db: Queryable,
  transferIds: readonly string[],
): Promise<{ count: number; amountKobo: number }> {
  return lines.selectPendingHolds(db, transferIds)
}
