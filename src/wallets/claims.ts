// Claims of wallet moves, coalesced (src/platform/coalescer.ts, as outbound submits are): the
// moves waiting when a lane frees up are claimed together in one transaction — one read of their
// wallets, one of their providers, one insert of the moves, one ledger call for their holds, one
// insert of their instructions — and each caller gets its own outcome after the commit. A claim
// the rules refuse (no such wallet, a capability not approved, too little available) is refused
// alone and records nothing; the others still commit. Persist before the bank call: a claimed
// move, its hold and its instruction (born `sending`, held by its request) are committed before
// the request sends it.
import { checkBankAccount } from '../banking/banks/service.ts'
import {
  committedPartnerAccount,
  createTransfers,
  derivedId,
  LedgerError,
  type TransferInput,
} from '../ledger/service.ts'
import type { Partner } from '../partners/service.ts'
import {
  createInstructions,
  newInstruction,
  type Instruction,
  type Operation,
  type PaymentsDeps,
} from '../money-out/pipeline/service.ts'
import type { Pool, Tx } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { claimReferences } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { getProvider, requireCapability, type Capability, type ProviderProfile } from '../banking/providers/service.ts'
import * as repo from './moves-repo.ts'
import { selectWalletsByIds, type Wallet } from './repo.ts'
import { WALLET_CURRENCY } from './service.ts'
import type { MoveType } from './states.ts'

/** Why the money moved, on the ledger transfers of each kind of move. */
export const LEDGER_CODE: Record<MoveType, string> = {
  credit: 'wallet_credit',
  debit: 'wallet_debit',
  wallet_transfer: 'wallet_transfer',
  bank_payout: 'wallet_bank_payout',
}

const CAPABILITY: Record<MoveType, Capability> = {
  credit: 'merchantCredit',
  debit: 'debit',
  wallet_transfer: 'walletTransfer',
  bank_payout: 'bankPayout',
}

/** What the bank is told to do for each kind of move. */
const OPERATION: Record<MoveType, Operation> = {
  credit: 'credit',
  debit: 'debit',
  wallet_transfer: 'book',
  bank_payout: 'interbank',
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

/** One caller's move, checked by its schema, to claim. */
export interface Claim {
  partner: Pick<Partner, 'id' | 'environment'>
  type: MoveType
  request: MoveRequest
  hash: string
}

export type ClaimOutcome =
  /** Committed: the move, its hold and its instruction, which the caller sends through the provider the claim was checked against. */
  | { kind: 'claimed'; move: repo.Move; instruction: Instruction; provider: ProviderProfile }
  /** The partner used the reference before (or another caller in the same batch did): replay it. */
  | { kind: 'taken' }
  /** Refused by a rule before anything was recorded. */
  | { kind: 'refused'; error: RailError }

interface Prepared {
  index: number
  move: repo.NewMove
  wallet: Wallet
  destination: Wallet | undefined
  provider: ProviderProfile
}

/**
 * The one write path of a move: claims a batch on the caller's transaction (the claim batcher's,
 * moves.ts; a lone claim is a batch of one); one outcome per claim, in order — the outcomes the
 * claims would have had claimed one by one in that order. A reference claimed twice in the batch
 * starts a new run of it, on the same transaction: in one insert the second claim would find the
 * reference taken by a move the first claim's refused hold then deletes (a refused move records
 * nothing, and its reference stays free), where claimed after it, it finds the reference free.
 */
export async function claimMoves(
  pool: Pool,
  payments: PaymentsDeps,
  tx: Tx,
  claims: readonly Claim[],
): Promise<ClaimOutcome[]> {
  const outcomes: ClaimOutcome[] = []
  for (const run of runsOfDistinctReferences(claims)) outcomes.push(...(await claimRun(pool, payments, tx, run)))
  return outcomes
}

/** The claims in order, cut before each one whose reference a claim earlier in its run has. */
function runsOfDistinctReferences(claims: readonly Claim[]): Claim[][] {
  const runs: Claim[][] = []
  let references = new Set<string>()
  for (const claim of claims) {
    const reference = `${claim.partner.id}:${claim.request.reference}`
    if (runs.length === 0 || references.has(reference)) {
      runs.push([])
      references = new Set()
    }
    runs.at(-1)!.push(claim)
    references.add(reference)
  }
  return runs
}

/** Claims a run of claims without a repeated reference: a handful of statements for all of them. */
async function claimRun(pool: Pool, payments: PaymentsDeps, tx: Tx, claims: readonly Claim[]): Promise<ClaimOutcome[]> {
  const outcomes: (ClaimOutcome | undefined)[] = new Array(claims.length)
  const prepared = await prepareAll(tx, claims, outcomes)
  // The moves' rows claim their references, in the batch's one insert (platform/idempotency.ts).
  const claimedRows = await claimReferences(
    prepared.map((entry) => entry.move),
    (rows) => repo.insertMoves(tx, rows),
  )
  const claimed = new Map(claimedRows.flatMap((move) => (move ? [[move.id, move] as const] : [])))
  const holding: { entry: Prepared; hold: TransferInput }[] = []
  const sending: Prepared[] = []
  for (const entry of prepared) {
    if (!claimed.has(entry.move.id)) outcomes[entry.index] = { kind: 'taken' }
    else if (entry.move.holdTransferId === null) sending.push(entry)
    else holding.push({ entry, hold: await holdTransfer(pool, entry) })
  }
  // Unlinked: each hold succeeds or fails on its own, against the balance the holds before it left.
  const held = await createTransfers(
    tx,
    holding.map(({ hold }) => hold),
  )
  const unheld: string[] = []
  for (const [position, result] of held.entries()) {
    const { entry } = holding[position]!
    if (result.result === 'ok') {
      sending.push(entry)
    } else if (result.result === 'exceeds_credits') {
      unheld.push(entry.move.id)
      outcomes[entry.index] = {
        kind: 'refused',
        error: new RailError(
          'insufficient_funds',
          `The wallet's available balance is below ${entry.move.amountKobo} kobo`,
          { walletId: entry.wallet.id },
        ),
      }
    } else {
      throw new LedgerError(result.result, `hold ${entry.move.holdTransferId}: ${result.result}`)
    }
  }
  await repo.deleteUnheldMoves(tx, unheld)
  const instructions = new Map(
    (
      await createInstructions(
        tx,
        sending.map((entry) => moveInstruction(payments, claims[entry.index]!.partner, entry)),
      )
    ).map((instruction) => [instruction.id, instruction]),
  )
  for (const entry of sending)
    outcomes[entry.index] = {
      kind: 'claimed',
      move: claimed.get(entry.move.id)!,
      instruction: instructions.get(entry.move.id)!,
      provider: entry.provider,
    }
  return outcomes.map((outcome) => outcome!)
}

/** Reads the claims' wallets and providers and prepares each claim; a refused one's outcome is set, and it is left out. */
async function prepareAll(
  tx: Tx,
  claims: readonly Claim[],
  outcomes: (ClaimOutcome | undefined)[],
): Promise<Prepared[]> {
  const wallets = new Map(
    (
      await selectWalletsByIds(
        tx,
        claims.flatMap((claim) => [claim.request.walletId, claim.request.destinationWalletId ?? '']),
      )
    ).map((wallet) => [wallet.id, wallet]),
  )
  const providers = new Map<string, ProviderProfile>()
  for (const name of new Set([...wallets.values()].map((wallet) => wallet.provider)))
    providers.set(name, await getProvider(tx, name))
  const prepared: Prepared[] = []
  for (const [index, claim] of claims.entries()) {
    try {
      prepared.push(prepare(claim, index, wallets, providers))
    } catch (error) {
      if (!(error instanceof RailError)) throw error
      outcomes[index] = { kind: 'refused', error }
    }
  }
  return prepared
}

/** Checks one claim against its wallets and provider (throws the RailError that refuses it) and makes its move. */
function prepare(
  claim: Claim,
  index: number,
  wallets: Map<string, Wallet>,
  providers: Map<string, ProviderProfile>,
): Prepared {
  const { partner, type, request } = claim
  const own = (walletId: string | undefined) => {
    const wallet = walletId === undefined ? undefined : wallets.get(walletId)
    return wallet && wallet.partnerId === partner.id ? wallet : undefined
  }
  const wallet = own(request.walletId)
  if (!wallet) throw notFound('Wallet')
  const destination =
    type === 'wallet_transfer'
      ? destinationOf(wallet, request.destinationWalletId, own(request.destinationWalletId))
      : undefined
  if (type === 'bank_payout') assertBankDestination(request)
  const provider = providers.get(wallet.provider)!
  // Fail closed: without the capability nothing is recorded and the provider is never called.
  requireCapability(provider, CAPABILITY[type])
  const id = uuidv7()
  const move: repo.NewMove = {
    id,
    partnerId: partner.id,
    reference: request.reference,
    requestHash: claim.hash,
    type,
    walletId: wallet.id,
    destinationWalletId: destination?.id ?? null,
    amountKobo: request.amountKobo,
    currency: request.currency,
    // Applied where the provider supports it: the move says what its statement line will say.
    narration: provider.capabilities.narration ? (request.narration ?? null) : null,
    provider: wallet.provider,
    holdTransferId: type === 'credit' ? null : derivedId(id, 'hold'),
    destinationBankCode: request.destinationBankCode ?? null,
    destinationAccountNumber: request.destinationAccountNumber ?? null,
    destinationAccountName: request.destinationAccountName ?? null,
  }
  return { index, move, wallet, destination, provider }
}

function destinationOf(
  wallet: Wallet,
  destinationWalletId: string | undefined,
  destination: Wallet | undefined,
): Wallet {
  if (!destinationWalletId) throw fieldError('destinationWalletId', 'is required')
  if (destinationWalletId === wallet.id) throw fieldError('destinationWalletId', 'must differ from walletId')
  if (!destination) throw notFound('Wallet')
  if (destination.provider !== wallet.provider)
    throw fieldError('destinationWalletId', 'must be a wallet at the same provider')
  return destination
}

function assertBankDestination(request: MoveRequest): void {
  checkBankAccount(
    { bankCode: request.destinationBankCode ?? '', accountNumber: request.destinationAccountNumber ?? '' },
    DESTINATION_FIELDS,
  )
}

const DESTINATION_FIELDS = { bankCode: 'destinationBankCode', accountNumber: 'destinationAccountNumber' }

/** Holds the amount leaving a wallet: a pending ledger transfer, refused beyond the available balance. */
async function holdTransfer(pool: Pool, { move, wallet, destination }: Prepared): Promise<TransferInput> {
  // The partner's settlement account, made in autocommit and remembered: a batch pays no look-up for it.
  const creditAccountId = destination
    ? destination.ledgerAccountId
    : await committedPartnerAccount(pool, move.partnerId, WALLET_CURRENCY, 'provider_settlement')
  return {
    id: move.holdTransferId!,
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

/** The move's bank instruction, held by its request, which sends it at once. */
function moveInstruction(
  payments: PaymentsDeps,
  partner: Pick<Partner, 'environment'>,
  { move, wallet, destination, provider }: Prepared,
) {
  const payout = move.type === 'bank_payout'
  return newInstruction(
    payments.settings,
    payments.clock,
    partner.environment,
    {
      id: move.id,
      partnerId: move.partnerId,
      ownerType: 'wallet_move',
      provider: move.provider,
      operation: OPERATION[move.type],
      amountKobo: move.amountKobo,
      narration: move.narration,
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
