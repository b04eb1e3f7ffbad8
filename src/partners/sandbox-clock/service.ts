// Sandbox test clocks (docs/sandbox.md): a sandbox partner's time is the real time plus an offset
// it moves forward, so expiry of intents and escrows, requery deadlines and settlement cut-offs can
// be exercised in seconds. Decisions about a partner's objects are judged by its clock
// (`partnerClock`); sweeps compare in SQL with `partner_now(partner_id, $now)`. Live partners
// have no offset, ever: the route refuses them as every sandbox route does.
import { offsetClock, type Clock } from '../../platform/clock.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../../platform/db.ts'
import { fieldError } from '../../platform/errors.ts'
import { claimKeyInTransaction, type IdempotencyKey } from '../../platform/idempotency-keys.ts'
import * as repo from './repo.ts'

/** One advance moves a clock at most a leap year ahead. */
export const ADVANCE_SECONDS_MAX = 366 * 86_400
/** A clock is at most 100 years ahead of real time (dates stay representable everywhere). */
export const OFFSET_SECONDS_MAX = 3_155_760_000

/**
 * What becomes due when a partner's time moves on: a module queues its sweep for that partner, or
 * brings its in-flight schedule forward — in the advance's transaction, so it runs promptly.
 */
export type OnAdvance = (tx: Tx, partnerId: string, seconds: number) => Promise<void>

export interface SandboxClockDeps {
  pool: Pool
  clock: Clock
  onAdvance: readonly OnAdvance[]
}

export interface ClockView {
  now: string
  offsetSeconds: number
}

/** The clock a partner's objects are judged by: the real clock for a live partner, its test clock for a sandbox one. */
export async function partnerClock(
  db: Queryable,
  clock: Clock,
  partner: { id: string; environment: string },
): Promise<Clock> {
  if (partner.environment !== 'sandbox') return clock
  return offsetClock(clock, await repo.selectOffsetSeconds(db, partner.id))
}

/** The same, when only the partner's id is at hand (a job): a live partner has no offset row. */
export async function partnerClockById(db: Queryable, clock: Clock, partnerId: string): Promise<Clock> {
  return offsetClock(clock, await repo.selectOffsetSeconds(db, partnerId))
}

/**
 * How far ahead of real time the furthest partner's clock is, in seconds: no partner's time is later
 * than real time plus this, so a sweep bounds its expiry index scan by it (a constant range).
 */
export async function furthestOffsetSeconds(db: Queryable): Promise<number> {
  return repo.selectFurthestOffsetSeconds(db)
}

export async function readClock(deps: Pick<SandboxClockDeps, 'pool' | 'clock'>, partnerId: string): Promise<ClockView> {
  return view(deps.clock, await repo.selectOffsetSeconds(deps.pool, partnerId))
}

/**
 * Moves the partner's time `seconds` ahead, and queues what that makes due, in one transaction.
 * The request has no reference: its Idempotency-Key, if sent, is claimed with the move, so the
 * same request again with the key (a retry, a replay) moves nothing and answers the clock as it stands.
 */
export async function advanceClock(
  deps: SandboxClockDeps,
  partnerId: string,
  seconds: number,
  key?: IdempotencyKey,
): Promise<ClockView> {
  const offsetSeconds = await withTransaction(deps.pool, async (tx) => {
    if ((await claimKeyInTransaction(tx, key)) === 'replayed') return repo.selectOffsetSeconds(tx, partnerId)
    const moved = await repo.addOffset(tx, partnerId, seconds, OFFSET_SECONDS_MAX, deps.clock.now())
    if (moved === undefined)
      throw fieldError(
        'seconds',
        `would take the clock more than ${OFFSET_SECONDS_MAX} seconds (100 years) ahead of real time`,
      )
    for (const due of deps.onAdvance) await due(tx, partnerId, seconds)
    return moved
  })
  return view(deps.clock, offsetSeconds)
}

function view(clock: Clock, offsetSeconds: number): ClockView {
  return { now: offsetClock(clock, offsetSeconds).now().toISOString(), offsetSeconds }
}
