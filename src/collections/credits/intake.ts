// Credits as they arrive: a provider announces each by a signed webhook (or a requery finds it);
// Rail stores the notice first, once per provider session id, with the job that applies it, and
// answers. A sweep gives stranded credits their job again.
import type { Pool, Queryable } from '../../platform/db.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { addJob } from '../../platform/jobs.ts'
import type { ProviderCredit } from '../../banking/providers/types.ts'
import * as repo from './repo.ts'
import type { FoundBy } from './repo.ts'

export const APPLY_TASK = 'inbound_credit_apply'
export const SWEEP_TASK = 'inbound_credit_sweep'
/** Every minute: credits stored but not applied after a grace period get their job again. */
export const INBOUND_CREDITS_CRONTAB = `* * * * * ${SWEEP_TASK}`
const STRANDED_AFTER_S = 60
const SWEEP_BATCH = 1_000

/**
 * Stores a credit the provider announced (or a requery or the sweep found) with its apply job;
 * once per session id, so whichever finds it first records it, and how (`foundBy`).
 */
export async function recordCredit(
  pool: Queryable,
  provider: string,
  credit: ProviderCredit,
  foundBy: FoundBy = 'notice',
): Promise<{ creditId: string; duplicate: boolean }> {
  const id = uuidv7()
  // A provider's credit has exactly the fields of a stored one, less Rail's id, the provider's name and how it was found.
  const inserted = await repo.insertCreditWithJob(pool, { id, provider, ...credit, foundBy }, APPLY_TASK)
  if (inserted) return { creditId: inserted, duplicate: false }
  return { creditId: (await repo.selectBySession(pool, provider, credit.sessionId))!.id, duplicate: true }
}

/** The sweep: credits stored but not applied after a grace period get their apply job again. */
export async function sweepStrandedCredits(pool: Pool): Promise<number> {
  const stranded = await repo.selectStranded(pool, STRANDED_AFTER_S, SWEEP_BATCH)
  for (const creditId of stranded)
    await addJob(pool, APPLY_TASK, { creditId }, { jobKey: `inbound_credit:${creditId}` })
  return stranded.length
}
