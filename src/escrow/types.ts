// The escrow module's limits (docs/contracts/escrow.md §Limits), job names and the shapes its parts share.

import type { Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import type { OutboundDeps } from '../money-out/outbound/service.ts'
import type { CollectionsDeps } from '../collections/virtual-accounts/service.ts'
import type * as repo from './repo.ts'

/** Only naira is held in escrow (docs/design.md §5); another ISO 4217 code is 422 unsupported_currency. */
export const ESCROW_CURRENCY = 'NGN'

/** The contract's smallest escrow, ₦100 (docs/contracts/escrow.md §Limits). */
export const AMOUNT_MIN_KOBO = 10_000

/** The contract's longest description (docs/contracts/escrow.md §Limits). */
export const DESCRIPTION_MAX_CHARS = 255

/** The contract's longest reason of a release or a cancel (docs/contracts/escrow.md §Limits). */
export const REASON_MAX_CHARS = 500

/** The contract's TTL when none is given (docs/contracts/escrow.md §Limits). */
export const TTL_HOURS_DEFAULT = 24

/** 30 days: an unfunded escrow should not linger longer; a new one is cheap. */
export const TTL_HOURS_MAX = 720

/** Metadata rides on every event; 4 KiB of JSON keeps events small. */
export const METADATA_MAX_BYTES = 4_096

/** The partner's idempotency reference. */
export const REFERENCE_MAX_CHARS = 64

/** A webhookSecret shorter than this is too easy to guess; longer than the max is a mistake. */
export const WEBHOOK_SECRET_MIN_CHARS = 8

export const WEBHOOK_SECRET_MAX_CHARS = 256

export const ESCROW_PAGE_MAX = 100

export const EXPIRE_TASK = 'escrow_expire'

export const EXPIRY_SWEEP_TASK = 'escrow_expiry_sweep'

/** Every minute: initiated escrows past their TTL expire (each also has a job at its own expiresAt). */
export const ESCROW_CRONTAB = `* * * * * ${EXPIRY_SWEEP_TASK}`

export interface EscrowDeps {
  pool: Pool
  /** Seals registered webhook secrets. */
  masterKey: Buffer
  clock: Clock
  /** Sandbox partners may use loopback webhook URLs (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks: boolean
  /** Funding: every escrow composes a payment intent whose virtual account the payer pays into. */
  collections: CollectionsDeps
  /** Money out: disbursements and refunds are outbound transfers of the payment pipeline. */
  outbound: OutboundDeps
}

export interface CreateRequest {
  type: repo.EscrowType
  amount: number
  currency: string
  payerEmail: string
  recipientEmail: string
  description: string
  ttlHours?: number
  webhookUrl?: string
  metadata?: Record<string, unknown>
  reference?: string
  /** Where the amount goes at release (a release may override it); none: the partner's float. */
  disbursement?: repo.Destination
}

export interface ReleaseRequest {
  reason?: string
  /** Replaces the destination given at create; on a released escrow whose disbursement failed, the retry's. */
  disbursement?: repo.Destination
}

/** The part of EscrowDeps that expiry (a job) needs. */
export type ExpiryDeps = Pick<EscrowDeps, 'pool' | 'clock' | 'outbound'>
