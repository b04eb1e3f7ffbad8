// Wallet moves (docs/contracts/wallets.md §Moves): credit, debit, wallet transfer and external send (bank payout). A move
// is a wallet's view of one bank instruction of the payment pipeline (src/money-out/pipeline):
//   1. claim (claims.ts) — in one transaction shared with whatever other claims are waiting: the
//      move under its reference (pending), the ledger hold for money leaving a wallet (too little
//      available → insufficient_funds, nothing recorded), and its instruction, born held by this
//      request and already `sending` unless a name enquiry comes first: the send is committed
//      before the bank is called;
//   2. the request works the instruction at once (name enquiry, send, the answer);
//   3. every change of the instruction reaches the move through walletOwner, in the pipeline's
//      transaction (shared by the answers arriving together): the status transitions (checked in
//      SQL) and the ledger — post or void the holds, or book the credits — a handful of
//      statements for the batch. No final answer leaves the move pending (the bank has it) or
//      unknown (no answer), its hold in place, and the pipeline's requery schedule decides.
// Should the request's process die, the pipeline's sweep finds the instruction and asks the bank.
import {
  committedPartnerAccount,
  createTransfers,
  derivedId,
  ensurePartnerAccount,
  type TransferInput,
} from '../ledger/service.ts'
import { NAME_MISMATCH_CODE, NAME_MISMATCH_MESSAGE } from '../banking/nip/name-match.ts'
import type { Partner } from '../partners/service.ts'
import {
  requeryNow,
  requestRequery,
  workCreated,
  type Instruction,
  type InstructionChange,
  type InstructionOwner,
  type PaymentsDeps,
} from '../money-out/pipeline/service.ts'
import { Coalescer } from '../platform/coalescer.ts'
import type { Pool, Tx } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import { findReplay, replayOf, requestHash, type ReferenceKind } from '../platform/idempotency.ts'
import { claimMoves, LEDGER_CODE, type Claim, type ClaimOutcome, type MoveRequest } from './claims.ts'
import * as repo from './moves-repo.ts'
import { selectWalletsByIds } from './repo.ts'
import { WALLET_CURRENCY } from './service.ts'
import { walletMoveStates, type MoveType } from './states.ts'

export type { Move } from './moves-repo.ts'
export type { MoveRequest } from './claims.ts'

export interface MovesDeps {
  pool: Pool
  /** The payment pipeline, which sends the moves' instructions. */
  payments: PaymentsDeps
  /** Coalesces concurrent claims into shared transactions written by claimMoves (claimBatcherFor): the way every move is claimed. */
  claimer: Coalescer<Claim, ClaimOutcome>
}

export interface Submitted {
  move: repo.Move
  replayed: boolean
}

/** The claim batcher for these deps: the claims waiting when a lane frees up are made together (a lone claim is a batch of one). */
export function claimBatcherFor(deps: Pick<MovesDeps, 'pool' | 'payments'>): Coalescer<Claim, ClaimOutcome> {
  return new Coalescer(deps.pool, (tx, claims) => claimMoves(deps.pool, deps.payments, tx, claims))
}

export async function submitMove(
  deps: MovesDeps,
  partner: Pick<Partner, 'id' | 'environment'>,
  type: MoveType,
  request: MoveRequest,
  requestId?: string,
): Promise<Submitted> {
  if (request.currency !== WALLET_CURRENCY)
    throw new RailError('unsupported_currency', `currency ${request.currency} is not served; use ${WALLET_CURRENCY}`)
  const key = { reference: request.reference, requestHash: requestHash({ type, ...request }) }
  const claim: Claim = { partner, type, request, hash: key.requestHash }
  // The partner's settlement account exists before the shared claim transaction needs it: made
  // there, it would take a second connection while the batch holds one (once per process).
  if (type !== 'wallet_transfer')
    await committedPartnerAccount(deps.pool, partner.id, WALLET_CURRENCY, 'provider_settlement')
  const outcome = await deps.claimer.run(claim)
  // A taken reference is answered with its move as it stands now — a pending move included (the
  // first request, or the pipeline after it, finishes it): a replay never waits for the first request.
  const stored = () => repo.selectMoveByReference(deps.pool, partner.id, request.reference)
  if (outcome.kind === 'taken') return { move: replayOf(MOVE_REFERENCE, key, await stored()).replayed, replayed: true }
  if (outcome.kind === 'refused') {
    // A reference recorded before is answered as it was, whatever changed since (its wallet, an approval).
    const known = await findReplay(MOVE_REFERENCE, key, stored)
    if (known) return { move: known.replayed, replayed: true }
    throw outcome.error
  }
  await workCreated(deps.payments, outcome.instruction, requestId, outcome.provider).catch(async (error: unknown) => {
    // The move is recorded: a worker asks the bank what happened (or, if even that cannot be
    // recorded now, the pipeline's sweep does), and the caller gets the move as it stands.
    deps.payments.log(
      'error',
      `wallet move ${outcome.move.id}: ${error instanceof Error ? error.message : String(error)}`,
    )
    await requestRequery(deps.pool, outcome.move.id).catch(() => {})
  })
  // A claimed move is always answered with its state: should the database not serve the read now
  // (overload), the move as claimed — pending — is the truth as far as this request knows it.
  const current = await repo.selectMove(deps.pool, outcome.move.id).catch((error: unknown) => {
    deps.payments.log(
      'warn',
      `wallet move ${outcome.move.id}: answered as claimed, its state could not be read: ${error instanceof Error ? error.message : String(error)}`,
    )
    return undefined
  })
  return { move: current ?? outcome.move, replayed: false }
}

/** GET /transaction/batch/{reference}: the move, asking the bank first when it is not final. */
export async function moveByReference(
  deps: MovesDeps,
  partnerId: string,
  reference: string,
  requestId?: string,
): Promise<repo.Move> {
  const move = await repo.selectMoveByReference(deps.pool, partnerId, reference)
  if (!move) throw new RailError('not_found', 'No move with this reference')
  if (walletMoveStates.isTerminal(move.status)) return move
  await requeryNow(deps.payments, move.id, requestId)
  return (await repo.selectMove(deps.pool, move.id))!
}

/**
 * The wallet moves' side of their instructions, for every change of a batch at once: answers
 * that are not final recorded in one statement; status transitions (checked in SQL) in one; the
 * ledger transfers of the transitions made — and only those — in one ledger call. A transfer the
 * ledger refuses raises and undoes the batch (the pipeline's writer then writes each change on its own).
 */
export const walletOwner: InstructionOwner = {
  async apply(tx, changes, clock) {
    const accepted = changes.filter(({ progress }) => progress === 'accepted')
    const silent = changes.filter(({ progress }) => progress === 'no_answer' || progress === 'unknown')
    const final = changes.filter(({ progress }) => progress === 'succeeded' || progress === 'failed')
    // Unknown already (an earlier silence): what the bank said since is still recorded.
    const madeUnknown = new Set(
      (
        await repo.transitionMoves(
          tx,
          silent.map((change) => moveChange(change, 'unknown')),
          clock.now(),
        )
      ).map((move) => move.id),
    )
    await repo.recordAnswers(
      tx,
      [...accepted, ...silent.filter(({ instruction }) => !madeUnknown.has(instruction.id))].map(({ instruction }) => ({
        moveId: instruction.id,
        answer: answerOf(instruction),
      })),
    )
    const settled = await repo.transitionMoves(
      tx,
      final.map((change) => moveChange(change, change.progress === 'succeeded' ? 'successful' : 'failed')),
      clock.now(),
    )
    const transfers = await settlementTransfers(tx, settled)
    const results = await createTransfers(tx, transfers)
    const refused = results.find((result) => result.result !== 'ok')
    if (refused) throw new Error(`wallet move ledger transfer ${refused.id}: ${refused.result}`)
  },
}

function moveChange({ instruction }: InstructionChange, next: repo.MoveChange['next']): repo.MoveChange {
  return { moveId: instruction.id, next, answer: answerOf(instruction) }
}

/** The ledger transfers that go with moves just made final: book a credit, post or void a hold (whose id derives from the move's). */
async function settlementTransfers(tx: Tx, moves: readonly repo.Move[]): Promise<TransferInput[]> {
  const credits = moves.filter((move) => move.type === 'credit' && move.status === 'successful')
  const wallets = new Map(
    (
      await selectWalletsByIds(
        tx,
        credits.map((move) => move.walletId),
      )
    ).map((wallet) => [wallet.id, wallet]),
  )
  const settlements = new Map<string, string>()
  const transfers: TransferInput[] = []
  for (const move of moves) {
    const source = { sourceType: 'wallet_move', sourceId: move.id }
    if (move.type === 'credit') {
      if (move.status !== 'successful') continue
      let settlement = settlements.get(move.partnerId)
      if (settlement === undefined) {
        settlement = await ensurePartnerAccount(tx, move.partnerId, WALLET_CURRENCY, 'provider_settlement')
        settlements.set(move.partnerId, settlement)
      }
      const wallet = wallets.get(move.walletId)!
      transfers.push({
        id: derivedId(move.id, 'credit'),
        debitAccountId: settlement,
        creditAccountId: wallet.ledgerAccountId,
        amountKobo: move.amountKobo,
        currency: move.currency,
        code: LEDGER_CODE.credit,
        ...source,
      })
    } else {
      const phase = move.status === 'successful' ? 'post' : 'void'
      transfers.push({
        id: derivedId(move.id, phase),
        phase,
        pendingId: derivedId(move.id, 'hold'),
        code: LEDGER_CODE[move.type],
        ...source,
      })
    }
  }
  return transfers
}

/**
 * What the bank said, as the move shows it; a failure the pipeline decided (a name mismatch, a
 * payment never received) says why — a name mismatch without whom the bank names, which is told
 * only within the partner's name-enquiry budget (NAME_MISMATCH_MESSAGE says why).
 */
function answerOf(instruction: Instruction): repo.ProviderAnswer {
  const decidedByRail = instruction.failureCode !== null && instruction.failureCode !== 'provider_declined'
  const failureMessage =
    instruction.failureCode === NAME_MISMATCH_CODE ? NAME_MISMATCH_MESSAGE : instruction.failureMessage
  return {
    providerReference: instruction.providerReference,
    responseCode: instruction.responseCode,
    responseMessage: decidedByRail ? failureMessage : instruction.responseMessage,
  }
}

/** How a wallet move takes its reference (platform/idempotency.ts). */
const MOVE_REFERENCE: ReferenceKind<repo.Move> = {
  field: 'reference',
  hashOf: (move) => move.requestHash,
  idOf: (move) => move.id,
}
