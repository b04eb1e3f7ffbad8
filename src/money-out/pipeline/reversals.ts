// A payout the provider reversed after it succeeded (docs/decisions/0016-payout-reversals.md). A
// provider's webhook saying so is a hint, never the evidence: it asks for a check, a job keyed per
// instruction (repeated webhooks collapse into one), which asks the provider (a requery) and records
// the reversal only when that answer says `reversed`. Recorded once: the instruction's mark and its
// owner's change (state, ledger transfer, event) are one transaction, guarded by the mark. No
// readable answer (a timeout, a 5xx, an unparseable body) decides nothing: the job fails and
// graphile-worker runs it again later.
import type { Clock } from '../../platform/clock.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../../platform/db.ts'
import { addJob } from '../../platform/jobs.ts'
import { getProvider, type ProviderRegistry } from '../../banking/providers/service.ts'
import * as repo from './repo.ts'

export const REVERSAL_TASK = 'payment_reversal_check'
/**
 * Tries of one check before graphile-worker gives it up: its backoff (e^attempts seconds, at most
 * e^10) makes 25 tries about four days of a provider giving no readable answer.
 */
const REVERSAL_CHECK_ATTEMPTS_MAX = 25

/** A reversal the provider confirmed: the instruction (still `succeeded`, now marked) and what the provider answered. */
export interface Reversal {
  instruction: repo.Instruction
  responseCode: string
  responseMessage: string
}

/** An instruction owner that can take a reversal back: it moves its own state, ledger and callback, on the check's transaction. */
export interface ReversalOwner {
  reversed(tx: Tx, reversals: readonly Reversal[], clock: Clock): Promise<void>
}

/** What the check needs of the payment pipeline (a PaymentsDeps is one). */
export interface ReversalDeps {
  pool: Pool
  providers: ProviderRegistry
  owners: Record<repo.OwnerType, object>
  clock: Clock
  log: (level: 'info' | 'warn' | 'error', message: string) => void
}

/**
 * A provider said the payout of `instructionId` was reversed (its webhook): asks for a check by a
 * worker, on the caller's connection. One job per instruction: asking again while one waits replaces it.
 */
export async function requestReversalCheck(db: Queryable, instructionId: string): Promise<void> {
  await addJob(
    db,
    REVERSAL_TASK,
    { id: instructionId },
    { jobKey: `payment-reversal:${instructionId}`, maxAttempts: REVERSAL_CHECK_ATTEMPTS_MAX },
  )
}

/** What a check found: recorded now, recorded before, the provider says it stands paid, or nothing to reverse. */
export type ReversalOutcome = 'reversed' | 'already_reversed' | 'not_reversed' | 'not_succeeded'

/**
 * The check: a succeeded instruction not yet marked is asked about; only the provider's answer
 * `reversed` records the reversal. Throws on no readable answer, so that the job is tried again.
 */
export async function checkReversal(deps: ReversalDeps, id: string): Promise<ReversalOutcome> {
  const instruction = await repo.selectInstruction(deps.pool, id)
  if (!instruction || instruction.state !== 'succeeded') return 'not_succeeded'
  if (await isMarked(deps.pool, id)) return 'already_reversed'
  const adapter = await deps.providers.adapterFor(await getProvider(deps.pool, instruction.provider))
  const answer = await adapter.requery(id)
  if (answer.outcome === 'unknown')
    throw new Error(`payment ${id}: no readable answer on a reversal check (${answer.error}); asked again later`)
  if (answer.outcome !== 'failed' || answer.reversed !== true) {
    deps.log(
      'warn',
      `payment ${id}: a reversal was announced, but the provider answers ${answer.outcome} (${answer.responseCode}); nothing changed`,
    )
    return 'not_reversed'
  }
  return withTransaction(deps.pool, async (tx) => {
    const marked = await markReversed(tx, id, answer.responseCode, answer.responseMessage, deps.clock.now())
    if (!marked) return 'already_reversed' // another check recorded it first
    const owner = deps.owners[marked.ownerType]
    const reversal: Reversal = {
      instruction: marked,
      responseCode: answer.responseCode,
      responseMessage: answer.responseMessage,
    }
    if (isReversalOwner(owner)) await owner.reversed(tx, [reversal], deps.clock)
    // A wallet's bank payout: the mark is the record an operator acts on (decision 0016 §Wallets).
    else
      deps.log(
        'error',
        `payment ${id}: reversed by the provider; its owner (${marked.ownerType}) does not take reversals back: an operator settles it`,
      )
    return 'reversed'
  })
}

function isReversalOwner(owner: object): owner is ReversalOwner {
  return typeof (owner as Partial<ReversalOwner>).reversed === 'function'
}

async function isMarked(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query<{ reversed_at: Date | null }>(
    `SELECT reversed_at FROM bank_instructions WHERE id = $1`,
    [id],
  )
  return rows[0]?.reversed_at != null
}

/** Marks a succeeded instruction reversed, once; undefined when it is marked already (or not succeeded). */
async function markReversed(
  tx: Tx,
  id: string,
  responseCode: string,
  responseMessage: string,
  at: Date,
): Promise<repo.Instruction | undefined> {
  const { rowCount } = await tx.query(
    `UPDATE bank_instructions SET reversed_at = $2, reversal_response_code = $3, reversal_response_message = $4
      WHERE id = $1 AND state = 'succeeded' AND reversed_at IS NULL`,
    [id, at, responseCode, responseMessage],
  )
  return rowCount === 1 ? repo.selectInstruction(tx, id) : undefined
}
