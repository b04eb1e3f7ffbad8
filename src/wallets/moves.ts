// Wallet moves (seed 000): credit, debit, wallet transfer and external send (bank payout). A move
// is a wallet's view of one bank instruction of the payment pipeline (src/payments):
//   1. claim — in one transaction: the move under its reference (pending), the ledger hold for
//      money leaving a wallet (too little available → insufficient_funds, nothing recorded), and
//      its instruction, born held by this request and already `sending` unless a name enquiry
//      comes first: the send is committed before the bank is called;
//   2. the request works the instruction at once (name enquiry, send, the answer);
//   3. every change of the instruction reaches the move through walletOwner, in the pipeline's
//      transaction: the status transition (checked in SQL) and the ledger — post or void the
//      hold, or book the credit. No final answer leaves the move pending (the bank has it) or
//      unknown (no answer), its hold in place, and the pipeline's requery schedule decides.
// Should the request's process die, the pipeline's sweep finds the instruction and asks the bank.
import { ensurePartnerAccount, LedgerError, ledgerRefusal, derivedId, type TransferInput } from '../ledger/service.ts'
import { findBank } from '../nip/banks.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Partner } from '../partners/service.ts'
import { instructionFromJson, instructionInStatement, newInstruction, requeryNow, requestRequery, workCreated, type Instruction, type InstructionOwner, type Operation, type PaymentsDeps } from '../payments/service.ts'
import type { Pool, Queryable } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { requestHash } from '../platform/idempotency.ts'
import type { Capability } from '../providers/capabilities.ts'
import { getProvider, requireCapability, type ProviderProfile } from '../providers/service.ts'
import * as repo from './moves-repo.ts'
import { findWallet, WALLET_CURRENCY, type Wallet } from './service.ts'
import { isFinal, type MoveType } from './states.ts'

export type { Move } from './moves-repo.ts'

/** When a caller asks again whose reference's claim is not visible yet: the claim is one short transaction. */
const CLAIM_IN_PROGRESS_RETRY_AFTER_S = 1

/** Why the money moved, on the ledger transfers of each kind of move. */
const LEDGER_CODE: Record<MoveType, string> = { credit: 'wallet_credit', debit: 'wallet_debit', wallet_transfer: 'wallet_transfer', bank_payout: 'wallet_bank_payout' }

const CAPABILITY: Record<MoveType, Capability> = { credit: 'merchantCredit', debit: 'debit', wallet_transfer: 'walletTransfer', bank_payout: 'bankPayout' }

/** What the bank is told to do for each kind of move. */
const OPERATION: Record<MoveType, Operation> = { credit: 'credit', debit: 'debit', wallet_transfer: 'book', bank_payout: 'interbank' }

export interface MovesDeps {
  pool: Pool
  /** The payment pipeline, which sends the moves' instructions. */
  payments: PaymentsDeps
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

export interface Submitted {
  move: repo.Move
  replayed: boolean
}

export async function submitMove(deps: MovesDeps, partner: Pick<Partner, 'id' | 'environment'>, type: MoveType, request: MoveRequest, requestId?: string): Promise<Submitted> {
  if (request.currency !== WALLET_CURRENCY) throw new RailError('unsupported_currency', `currency ${request.currency} is not served; use ${WALLET_CURRENCY}`)
  const partnerId = partner.id
  const hash = requestHash({ type, ...request })
  const known = await repo.selectMoveByReference(deps.pool, partnerId, request.reference)
  if (known) return replay(known, hash)

  const wallet = await findWallet(deps.pool, partnerId, request.walletId)
  const destination = type === 'wallet_transfer' ? await destinationOf(deps.pool, partnerId, wallet, request.destinationWalletId) : undefined
  if (type === 'bank_payout') assertBankDestination(request)
  const provider = await getProvider(deps.pool, wallet.provider)
  // Fail closed: without the capability nothing is recorded and the provider is never called.
  requireCapability(provider, CAPABILITY[type])

  const claimed = await claim(deps, partner, type, request, hash, wallet, destination, provider)
  if (!claimed.created) return replay(claimed.move, hash)
  await workCreated(deps.payments, claimed.instruction, requestId).catch(async (error: unknown) => {
    // The move is recorded: a worker asks the bank what happened (or, if even that cannot be
    // recorded now, the pipeline's sweep does), and the caller gets the move as it stands.
    deps.payments.log('error', `wallet move ${claimed.move.id}: ${error instanceof Error ? error.message : String(error)}`)
    await requestRequery(deps.pool, claimed.move.id).catch(() => {})
  })
  return { move: (await repo.selectMove(deps.pool, claimed.move.id))!, replayed: false }
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
  deps: MovesDeps,
  partner: Pick<Partner, 'id' | 'environment'>,
  type: MoveType,
  request: MoveRequest,
  hash: string,
  wallet: Wallet,
  destination: Wallet | undefined,
  provider: ProviderProfile,
): Promise<{ created: false; move: repo.Move } | { created: true; move: repo.Move; instruction: Instruction }> {
  const id = uuidv7()
  const holdTransferId = type === 'credit' ? null : derivedId(id, 'hold')
  const newMove: repo.NewMove = {
    id,
    partnerId: partner.id,
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
  }
  const hold = holdTransferId ? await holdTransfer(deps.pool, newMove, wallet, destination, holdTransferId) : undefined
  const instruction = moveInstruction(deps, partner, newMove, wallet, destination, provider)
  let claimed
  try {
    // The move, its hold and its instruction (born held by this request, `sending`): one statement.
    claimed = await repo.insertMove(deps.pool, newMove, hold, (source, firstParam) => instructionInStatement(instruction, source, firstParam))
  } catch (error) {
    const refusal = ledgerRefusal(error)
    if (refusal === 'exceeds_credits') {
      throw new RailError('insufficient_funds', `The wallet's available balance is below ${newMove.amountKobo} kobo`, { walletId: wallet.id })
    }
    throw refusal ? new LedgerError(refusal, `hold ${holdTransferId}: ${refusal}`) : error
  }
  // No row: a concurrent request claimed the reference first (the insert waited for its commit).
  if (!claimed) return { created: false, move: await claimedBefore(deps.pool, partner.id, request.reference) }
  return { created: true, move: claimed.move, instruction: instructionFromJson(claimed.companion!) }
}

/** The move's bank instruction, held by this request, which sends it at once. */
function moveInstruction(deps: MovesDeps, partner: Pick<Partner, 'environment'>, move: repo.NewMove, wallet: Wallet, destination: Wallet | undefined, provider: ProviderProfile) {
  const payout = move.type === 'bank_payout'
  return newInstruction(
    deps.payments.settings,
    deps.payments.clock,
    partner.environment,
    {
      id: move.id,
      partnerId: move.partnerId,
      ownerType: 'wallet_move',
      provider: move.provider,
      operation: OPERATION[move.type],
      amountKobo: move.amountKobo,
      narration: provider.capabilities.narration ? move.narration : null,
      debitAccountNumber: move.type === 'credit' ? null : wallet.accountNumber,
      creditAccountNumber: move.type === 'credit' ? wallet.accountNumber : (destination?.accountNumber ?? null),
      destinationBankCode: move.destinationBankCode,
      destinationAccountNumber: move.destinationAccountNumber,
      nameCheck: payout && provider.capabilities.nameCheck,
      expectedAccountName: move.destinationAccountName,
    },
    true,
  )
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

/** Which kind of move an instruction is, by what the bank was told to do. */
const MOVE_TYPE: Partial<Record<Operation, MoveType>> = { credit: 'credit', debit: 'debit', book: 'wallet_transfer', interbank: 'bank_payout' }

/** The ledger transfer that goes with a move's final status: book a credit, post or void its hold (whose id derives from the move's). */
async function settlementTransfer(db: Queryable, instruction: Instruction, status: 'successful' | 'failed'): Promise<TransferInput | undefined> {
  const source = { sourceType: 'wallet_move', sourceId: instruction.id }
  const type = MOVE_TYPE[instruction.operation]!
  if (type === 'credit') {
    if (status !== 'successful') return undefined
    const move = (await repo.selectMove(db, instruction.id))!
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
  return { id: derivedId(instruction.id, phase), phase, pendingId: derivedId(instruction.id, 'hold'), code: LEDGER_CODE[type], ...source }
}

/** GET /transaction/batch/{reference}: the move, asking the bank first when it is not final. */
export async function moveByReference(deps: MovesDeps, partnerId: string, reference: string, requestId?: string): Promise<repo.Move> {
  const move = await repo.selectMoveByReference(deps.pool, partnerId, reference)
  if (!move) throw new RailError('not_found', 'No move with this reference')
  if (isFinal(move.status)) return move
  await requeryNow(deps.payments, move.id, requestId)
  return (await repo.selectMove(deps.pool, move.id))!
}

/**
 * The wallet moves' side of their instructions: each change moves the move's status (checked in
 * SQL) with its ledger transfer in the same statement — only the change that is made posts it.
 */
export const walletOwner: InstructionOwner = {
  async apply(tx, changes) {
    for (const { instruction, progress } of changes) {
      const answer = answerOf(instruction)
      if (progress === 'accepted') {
        await repo.recordAnswer(tx, instruction.id, answer)
      } else if (progress === 'no_answer' || progress === 'unknown') {
        // Unknown already (an earlier silence): what the bank said since is still recorded.
        if (!(await repo.transitionMove(tx, instruction.id, 'unknown', answer))) await repo.recordAnswer(tx, instruction.id, answer)
      } else {
        const status = progress === 'succeeded' ? 'successful' : 'failed'
        await repo.transitionMove(tx, instruction.id, status, answer, await settlementTransfer(tx, instruction, status))
      }
    }
  },
}

/** What the bank said, as the move shows it; a failure the pipeline decided (a name mismatch, a payment never received) says why. */
function answerOf(instruction: Instruction): repo.ProviderAnswer {
  const decidedByRail = instruction.failureCode !== null && instruction.failureCode !== 'provider_declined'
  return {
    providerReference: instruction.providerReference,
    responseCode: instruction.responseCode,
    responseMessage: decidedByRail ? instruction.failureMessage : instruction.responseMessage,
  }
}

/**
 * The stored move of a reference used before, as it stands now — a pending move included (the
 * first request, or the pipeline after it, finishes it; GET /transaction/batch/{reference} asks
 * the bank). A replay never waits for the first request.
 */
function replay(move: repo.Move, hash: string): Submitted {
  if (move.requestHash !== hash) {
    throw new RailError('idempotency_conflict', `reference ${move.reference} was already used with a different request`, { reference: move.reference })
  }
  return { move, replayed: true }
}

/** The move that claimed a reference first; while its claim is not visible yet, 409 request_in_progress. */
async function claimedBefore(pool: Pool, partnerId: string, reference: string): Promise<repo.Move> {
  const move = await repo.selectMoveByReference(pool, partnerId, reference)
  if (!move) {
    throw new RailError('request_in_progress', `The first request with reference ${reference} is still being recorded; retry for its result`, { reference }, {
      retryAfterS: CLAIM_IN_PROGRESS_RETRY_AFTER_S,
    })
  }
  return move
}
