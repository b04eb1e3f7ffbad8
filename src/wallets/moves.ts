// Wallet moves (seed 000): credit, debit, wallet transfer and external send (bank payout), over
// the provider and the ledger.
//
// One move, three steps, none holding a transaction across the network:
//   1. claim — in one transaction: record the move under its reference (pending) and hold the
//      amount in the ledger for money leaving a wallet (a pending transfer; too little available
//      → insufficient_funds and nothing is recorded). Should this process die before step 3, the
//      sweep (every minute) finds the move still unanswered and schedules its requery;
//   2. ask the provider, with the move's id as the bank's reference (a retry is a duplicate there,
//      never a second move);
//   3. apply the answer — in one transaction: the status transition (checked in SQL), and the
//      ledger: post or void the hold, or book the credit. No final answer leaves the move unknown
//      with the hold in place, and requery decides later.
import { derivedId, ensurePartnerAccount, LedgerError, ledgerRefusal, type TransferInput } from '../ledger/service.ts'
import { findBank } from '../nip/banks.ts'
import { isValidNuban } from '../nip/nuban.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { requestHash } from '../platform/idempotency.ts'
import { addJob } from '../platform/jobs.ts'
import type { Capability } from '../providers/capabilities.ts'
import type { ProviderRegistry } from '../providers/registry.ts'
import { getProvider, requireCapability } from '../providers/service.ts'
import type { ProviderAdapter, ProviderResult } from '../providers/types.ts'
import * as repo from './moves-repo.ts'
import { findWallet, WALLET_CURRENCY, type Wallet } from './service.ts'
import { isFinal, type MoveType } from './states.ts'

export type { Move } from './moves-repo.ts'

export const RESOLVE_MOVE_TASK = 'wallet_move_resolve'
export const SWEEP_UNANSWERED_TASK = 'wallet_moves_sweep_unanswered'
/** Every minute: a move left unanswered by a process that died is requeried within about 1.5 minutes. */
export const WALLETS_CRONTAB = `* * * * * ${SWEEP_UNANSWERED_TASK}`
/** A move still unanswered this long after its claim is resolved by requery (its process may have died). */
const PENDING_GRACE_S = 30
/** Moves read per query of the sweep. */
const SWEEP_BATCH = 500
/** Requery schedule: 5 s, then doubling, until this deadline; then the move stays unknown. */
const REQUERY_FIRST_DELAY_S = 5
const REQUERY_DEADLINE_S = 24 * 60 * 60
/** How long a replay waits for the first request of its reference to finish. */
const REPLAY_WAIT_MS = 15_000
const REPLAY_POLL_MS = 100

/** Why the money moved, on the ledger transfers of each kind of move. */
const LEDGER_CODE: Record<MoveType, string> = { credit: 'wallet_credit', debit: 'wallet_debit', wallet_transfer: 'wallet_transfer', bank_payout: 'wallet_bank_payout' }

const CAPABILITY: Record<MoveType, Capability> = { credit: 'merchantCredit', debit: 'debit', wallet_transfer: 'walletTransfer', bank_payout: 'bankPayout' }

export interface MovesDeps {
  pool: Pool
  providers: ProviderRegistry
}

export interface MoveRequest {
  walletId: string
  reference: string
  amountKobo: number
  currency: string
  narration?: string
  destinationWalletId?: string
  destinationAccountNumber?: string
  destinationBankCode?: string
  destinationAccountName?: string
}

/** A move refused before anything was sent (a failed name check); its code may be the enquiry's. */
type MoveOutcome = ProviderResult<null> | { outcome: 'failed'; responseCode: string | null; responseMessage: string; providerReference: string | null }

export interface Submitted {
  move: repo.Move
  replayed: boolean
}

export async function submitMove(deps: MovesDeps, partnerId: string, type: MoveType, request: MoveRequest, requestId?: string): Promise<Submitted> {
  if (request.currency !== WALLET_CURRENCY) throw new RailError('unsupported_currency', `currency ${request.currency} is not served; use ${WALLET_CURRENCY}`)
  const hash = requestHash({ type, ...request })
  const known = await repo.selectMoveByReference(deps.pool, partnerId, request.reference)
  if (known) return replay(deps.pool, known, hash)

  const wallet = await findWallet(deps.pool, partnerId, request.walletId)
  const destination = type === 'wallet_transfer' ? await destinationOf(deps.pool, partnerId, wallet, request.destinationWalletId) : undefined
  if (type === 'bank_payout') assertBankDestination(request)
  const provider = await getProvider(deps.pool, wallet.provider)
  // Fail closed: without the capability nothing is recorded and the provider is never called.
  requireCapability(provider, CAPABILITY[type])

  const claimed = await claim(deps.pool, partnerId, type, request, hash, wallet, destination)
  if (!claimed.created) return replay(deps.pool, claimed.move, hash)
  const adapter = deps.providers.adapterFor(provider, requestId)
  const narration = provider.capabilities.narration ? (request.narration ?? undefined) : undefined
  const result = await askProvider(adapter, claimed.move, wallet, destination, narration, provider.capabilities.nameCheck)
  return { move: await applyResult(deps.pool, claimed.move, result), replayed: false }
}

function assertBankDestination(request: MoveRequest): void {
  const bankCode = request.destinationBankCode ?? ''
  if (!findBank(bankCode)) throw fieldError('destinationBankCode', 'is not a known bank code')
  if (!isValidNuban(bankCode, request.destinationAccountNumber ?? '')) throw fieldError('destinationAccountNumber', 'is not a valid NUBAN at that bank')
}

async function destinationOf(pool: Pool, partnerId: string, wallet: Wallet, destinationWalletId: string | undefined): Promise<Wallet> {
  if (!destinationWalletId) throw fieldError('destinationWalletId', 'is required')
  if (destinationWalletId === wallet.id) throw fieldError('destinationWalletId', 'must differ from walletId')
  const destination = await findWallet(pool, partnerId, destinationWalletId)
  if (destination.provider !== wallet.provider) throw fieldError('destinationWalletId', 'must be a wallet at the same provider')
  return destination
}


async function claim(
  pool: Pool,
  partnerId: string,
  type: MoveType,
  request: MoveRequest,
  hash: string,
  wallet: Wallet,
  destination: Wallet | undefined,
): Promise<{ created: boolean; move: repo.Move }> {
  const id = uuidv7()
  const holdTransferId = type === 'credit' ? null : derivedId(id, 'hold')
  const newMove: repo.NewMove = {
    id,
    partnerId,
    reference: request.reference,
    requestHash: hash,
    type,
    walletId: wallet.id,
    destinationWalletId: destination?.id ?? null,
    amountKobo: request.amountKobo,
    currency: request.currency,
    narration: request.narration ?? null,
    provider: wallet.provider,
    holdTransferId,
    destinationBankCode: request.destinationBankCode ?? null,
    destinationAccountNumber: request.destinationAccountNumber ?? null,
    destinationAccountName: request.destinationAccountName ?? null,
    requeryDeadlineAt: new Date(Date.now() + REQUERY_DEADLINE_S * 1000),
  }
  // The move and its hold are one statement, hence one transaction.
  const hold = holdTransferId ? await holdTransfer(pool, newMove, wallet, destination, holdTransferId) : undefined
  let move: repo.Move | undefined
  try {
    move = await repo.insertMove(pool, newMove, hold)
  } catch (error) {
    if (ledgerRefusal(error) === 'exceeds_credits') {
      throw new RailError('insufficient_funds', `The wallet's available balance is below ${newMove.amountKobo} kobo`, { walletId: wallet.id })
    }
    const refusal = ledgerRefusal(error)
    throw refusal ? new LedgerError(refusal, `hold ${holdTransferId}: ${refusal}`) : error
  }
  // No row: a concurrent request claimed the reference first.
  if (!move) return { created: false, move: (await repo.selectMoveByReference(pool, partnerId, request.reference))! }
  return { created: true, move }
}

/** Holds the amount leaving a wallet: a pending ledger transfer, refused beyond the available balance. */
async function holdTransfer(pool: Pool, move: repo.NewMove, wallet: Wallet, destination: Wallet | undefined, holdTransferId: string): Promise<TransferInput> {
  const creditAccountId = destination ? destination.ledgerAccountId : await ensurePartnerAccount(pool, move.partnerId, WALLET_CURRENCY, 'provider_settlement')
  return {
    id: holdTransferId,
    phase: 'pending',
    debitAccountId: wallet.ledgerAccountId,
    creditAccountId,
    amountKobo: move.amountKobo,
    currency: move.currency,
    code: LEDGER_CODE[move.type],
    sourceType: 'wallet_move',
    sourceId: move.id,
  }
}

async function askProvider(
  adapter: ProviderAdapter,
  move: repo.Move,
  wallet: Wallet,
  destination: Wallet | undefined,
  narration: string | undefined,
  nameCheck: boolean,
): Promise<MoveOutcome> {
  const base = { reference: move.id, amountKobo: move.amountKobo, narration }
  if (move.type === 'credit') return adapter.credit({ ...base, accountNumber: wallet.accountNumber })
  if (move.type === 'debit') return adapter.debit({ ...base, accountNumber: wallet.accountNumber })
  if (move.type === 'wallet_transfer') return adapter.walletTransfer({ ...base, fromAccountNumber: wallet.accountNumber, toAccountNumber: destination!.accountNumber })
  const bankCode = move.destinationBankCode!
  const accountNumber = move.destinationAccountNumber!
  if (nameCheck && move.destinationAccountName !== null) {
    const refusal = await checkName(adapter, bankCode, accountNumber, move.destinationAccountName)
    if (refusal) return refusal
  }
  return adapter.sendToBank({ ...base, fromAccountNumber: wallet.accountNumber, destinationBankCode: bankCode, destinationAccountNumber: accountNumber })
}

/**
 * Name enquiry before paying out: a different holder fails the move with NIP 08 and nothing is
 * sent. No answer to the enquiry also sends nothing: the move fails, and can be made again under
 * a new reference.
 */
async function checkName(adapter: ProviderAdapter, bankCode: string, accountNumber: string, expectedName: string): Promise<MoveOutcome | undefined> {
  const enquiry = await adapter.nameEnquiry({ bankCode, accountNumber })
  if (enquiry.outcome !== 'successful') {
    if (enquiry.outcome === 'failed') {
      return { outcome: 'failed', responseCode: enquiry.responseCode, responseMessage: enquiry.responseMessage, providerReference: enquiry.providerReference }
    }
    return { outcome: 'failed', responseCode: null, responseMessage: 'Name enquiry gave no answer; nothing was sent', providerReference: null }
  }
  if (normalisedName(enquiry.value.accountName) !== normalisedName(expectedName)) {
    return { outcome: 'failed', responseCode: '08', responseMessage: `Account name mismatch: the account is held by ${enquiry.value.accountName}`, providerReference: enquiry.providerReference || null }
  }
  return undefined
}

function normalisedName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]+/g, ' ').trim()
}

/**
 * Applies a provider answer exactly once: the status transition is checked in SQL, and only the
 * request that makes it posts the ledger transfers, in the same statement (a final answer) or
 * transaction (none yet).
 */
export async function applyResult(pool: Pool, move: repo.Move, result: MoveOutcome): Promise<repo.Move> {
  const answer =
    result.outcome === 'unknown'
      ? { providerReference: null, responseCode: null, responseMessage: null }
      : { providerReference: result.providerReference || null, responseCode: result.responseCode, responseMessage: result.responseMessage }
  if (result.outcome === 'successful' || result.outcome === 'failed') {
    const transfer = await settlementTransfer(pool, move, result.outcome)
    const changed = await repo.transitionMove(pool, move.id, result.outcome, answer, transfer)
    return changed ?? (await repo.selectMove(pool, move.id))! // already decided: nothing twice
  }
  return withTransaction(pool, async (tx) => {
    // No final answer: the hold stays and the requery schedule takes over. The bank's "in
    // progress" keeps the move pending; no answer at all makes it unknown.
    const changed = result.outcome === 'unknown' ? await repo.transitionMove(tx, move.id, 'unknown', answer) : await repo.recordAnswer(tx, move.id, answer)
    const current = changed ?? (await repo.selectMove(tx, move.id))!
    if (!isFinal(current.status)) await scheduleRequery(tx, current)
    return current
  })
}

/** The ledger transfer that goes with a move's final status: book a credit, post or void a hold. */
async function settlementTransfer(db: Queryable, move: repo.Move, status: 'successful' | 'failed'): Promise<TransferInput | undefined> {
  const source = { sourceType: 'wallet_move', sourceId: move.id }
  if (move.type === 'credit') {
    if (status !== 'successful') return undefined
    const wallet = await findWallet(db, move.partnerId, move.walletId)
    return {
      id: derivedId(move.id, 'credit'),
      debitAccountId: await ensurePartnerAccount(db, move.partnerId, WALLET_CURRENCY, 'provider_settlement'),
      creditAccountId: wallet.ledgerAccountId,
      amountKobo: move.amountKobo,
      currency: move.currency,
      code: LEDGER_CODE.credit,
      ...source,
    }
  }
  const phase = status === 'successful' ? 'post' : 'void'
  return { id: derivedId(move.id, phase), phase, pendingId: move.holdTransferId!, code: LEDGER_CODE[move.type], ...source }
}

async function scheduleRequery(tx: Tx, move: repo.Move): Promise<void> {
  const delayS = REQUERY_FIRST_DELAY_S * 2 ** move.requeryAttempts
  const runAt = new Date(Math.min(Date.now() + delayS * 1000, move.requeryDeadlineAt.getTime()))
  await addJob(tx, RESOLVE_MOVE_TASK, { moveId: move.id }, { jobKey: `wallet_move:${move.id}`, runAt })
}

/** Asks the provider what happened to a move that has no final answer yet, and applies the answer. */
export async function requeryMove(deps: MovesDeps, move: repo.Move, requestId?: string): Promise<repo.Move> {
  if (isFinal(move.status)) return move
  const provider = await getProvider(deps.pool, move.provider)
  const result = await deps.providers.adapterFor(provider, requestId).requery(move.id)
  await repo.countRequery(deps.pool, move.id)
  return applyResult(deps.pool, { ...move, requeryAttempts: move.requeryAttempts + 1 }, result)
}

/** GET /transaction/batch/{reference}: the move, asking the provider first when it is not final. */
export async function moveByReference(deps: MovesDeps, partnerId: string, reference: string, requestId?: string): Promise<repo.Move> {
  const move = await repo.selectMoveByReference(deps.pool, partnerId, reference)
  if (!move) throw new RailError('not_found', 'No move with this reference')
  // Not final: ask the provider now. (A move still pending may have its first request in flight;
  // the transitions allow that request's answer to land after this one.)
  return isFinal(move.status) ? move : requeryMove(deps, move, requestId)
}

/**
 * The sweep: a move still without an answer PENDING_GRACE_S after its claim lost the process that
 * was asking the provider (its answer would have been applied within the provider timeout). Each
 * gets its resolve job; a job already scheduled for it is replaced, not doubled (job key).
 */
export async function sweepUnansweredMoves(pool: Pool): Promise<number> {
  let scheduled = 0
  let after: { createdAt: Date; id: string } | null = null
  for (;;) {
    const moves = await repo.selectUnansweredMoves(pool, PENDING_GRACE_S, after, SWEEP_BATCH)
    for (const move of moves) await addJob(pool, RESOLVE_MOVE_TASK, { moveId: move.id }, { jobKey: `wallet_move:${move.id}` })
    scheduled += moves.length
    if (moves.length < SWEEP_BATCH) return scheduled
    after = moves.at(-1)!
  }
}

/** The background job: resolves a move left pending or unknown, on the requery schedule. */
export async function resolveMove(deps: MovesDeps, moveId: string): Promise<void> {
  const move = await repo.selectMove(deps.pool, moveId)
  if (!move || isFinal(move.status)) return
  if (Date.now() >= move.requeryDeadlineAt.getTime()) {
    // The schedule is exhausted: the move stays unknown, its hold in place, for reconciliation.
    await repo.transitionMove(deps.pool, move.id, 'unknown', { providerReference: null, responseCode: null, responseMessage: null })
    return
  }
  // Not final after this requery: applying its answer scheduled the next one.
  await requeryMove(deps, move)
}

async function replay(pool: Pool, move: repo.Move, hash: string): Promise<Submitted> {
  if (move.requestHash !== hash) {
    throw new RailError('idempotency_conflict', `reference ${move.reference} was already used with a different request`, { reference: move.reference })
  }
  // The first request of this reference may still be asking the provider: wait for its result.
  let current = move
  const deadline = Date.now() + REPLAY_WAIT_MS
  while (current.status === 'pending' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS))
    current = (await repo.selectMove(pool, move.id))!
  }
  return { move: current, replayed: true }
}
