// What the inbound-credit paths are given: the collections deps, the owners that decide what a
// credit to their intent means and settlement's seam (both registered by those products in
// collections' registries), and the refunds core (triage refunds).
import type { TransferInput } from '../../ledger/service.ts'
import type { OutboundDeps } from '../../money-out/outbound/service.ts'
import type { IntentOwnerType } from '../intents/service.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Tx } from '../../platform/db.ts'
import { Registry } from '../../platform/registry.ts'
import type { RefundsDeps } from '../../money-out/refunds/service.ts'
import type { CollectionsDeps } from '../virtual-accounts/service.ts'

/** A credit to an intent that an owner (an invoice, an escrow) composed: the owner decides what it means. */
export interface OwnedCredit {
  creditId: string
  partnerId: string
  ownerId: string
  intentId: string
  amountKobo: number
  currency: string
  /** The partner's collections account, which the credit has just reached. */
  collectionsAccountId: string
}

/**
 * What an owner does with a credit, on the credit's transaction: how much of it the owner took —
 * all of it (moving it on from the collections account if it must), none (it is paid, cancelled,
 * closed: the credit goes to triage), or part (an overpayment: the excess goes to triage).
 * `movedOnKobo`: how much of what it took the owner moved out of collections itself (an escrow's
 * holding account); the rest stays in collections and is settled (default 0).
 */
export type CreditOwnerHandler = (
  tx: Tx,
  credit: OwnedCredit,
  clock: Clock,
) => Promise<{ takenKobo: number; movedOnKobo?: number }>
/** The registered owners by type (the credit-owner registry's view): a credit to an intent with no registered owner is an error. */
export type CreditOwners = Partial<Record<IntentOwnerType, CreditOwnerHandler>>

/**
 * Collections' registries: an intent's owner (an invoice, an escrow) registers how it takes a
 * credit to its intent; settlement registers how it settles what credits leave in collections.
 */
export interface CollectionsRegistries {
  creditOwners: Registry<IntentOwnerType, CreditOwnerHandler>
  collected: Registry<'settlement', CollectedHandler>
}

export function collectionsRegistries(): CollectionsRegistries {
  return {
    creditOwners: new Registry<IntentOwnerType, CreditOwnerHandler>('credit owner', ['invoice', 'escrow']),
    collected: new Registry<'settlement', CollectedHandler>('collected money', ['settlement']),
  }
}

export interface InboundDeps extends CollectionsDeps {
  outbound: OutboundDeps
  /** collectionsRegistries().creditOwners.handlers: the owners registered so far. */
  owners: CreditOwners
  /** The refunds core, through which triage refunds an unmatched credit. */
  refunds: RefundsDeps
  /** Settlement of what credits leave in collections (src/settlement); without it, the money stays there. */
  settlement?: CollectedHandler
}

/** Money a credit left in the partner's collections account: what settlement moves on. */
export interface CollectedCredit {
  creditId: string
  partnerId: string
  currency: string
  amountKobo: number
  collectionsAccountId: string
}

/**
 * Settlement's seam, on the credit's transaction: the ledger transfers that settle these credits
 * now (collections → float), to be posted with or after the credits' own; credits settled later
 * (to a bank account, by cycle) are recorded for their cycle and give no transfer.
 */
export type CollectedHandler = (tx: Tx, credits: readonly CollectedCredit[]) => Promise<TransferInput[]>
