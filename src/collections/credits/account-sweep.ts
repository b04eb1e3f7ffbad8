// The sweep of every account that can receive money, for credits whose notice never came (issue
// 31: money at the bank Rail never saw). A notice can be lost for good (the sandbox bank's 9404
// amount, docs/sandbox.md); a partner's requery finds it only for the one account asked about.
// So, on a schedule, every virtual account (a payment intent's, an escrow's funding account, a
// persistent or FBO account) and every wallet's account is asked for its credits since the last
// sweep, a batch of accounts a run, the place kept between runs (sweep-repo.ts). Each credit Rail
// does not have is recorded with `foundBy: "sweep"` and applied by the one intake a notice goes
// through (intake.ts): once per session id, so the notice arriving later adds nothing.
import type { Clock } from '../../platform/clock.ts'
import type { Pool } from '../../platform/db.ts'
import { getProvider, type ProviderProfile } from '../../banking/providers/service.ts'
import type { ProviderCredit } from '../../banking/providers/types.ts'
import { receivingAccountsAfter, type ReceivingAccount } from '../virtual-accounts/service.ts'
import { walletAccountsAfter } from '../../wallets/service.ts'
import type { InboundDeps } from './deps.ts'
import { recordCredit } from './intake.ts'
import { selectKnownSessions } from './repo.ts'
import { selectPlace, updatePlace, type SweepPlace } from './sweep-repo.ts'

export const ACCOUNT_SWEEP_TASK = 'inbound_credit_account_sweep'

export interface AccountSweepSettings {
  /** How often the sweep runs (the crontab's step, 1–59 minutes). */
  everyMinutes: number
  /** Accounts asked per run: thousands of accounts are covered over several runs, none of them long. */
  accountsPerRun: number
  /** A credit younger than this is left to its notice, which may still be on its way; the next pass asks again. */
  noticeGraceMs: number
  /** An archived account still receives (the credit goes to triage): swept this long after archiving. */
  archivedSweptForDays: number
}

export const ACCOUNT_SWEEP_DEFAULTS: AccountSweepSettings = {
  everyMinutes: 1,
  accountsPerRun: 100,
  noticeGraceMs: 120_000,
  archivedSweptForDays: 30,
}

/** One run stops asking after this long (each account is one call to the provider, up to its timeout); the rest waits for the next run. */
const RUN_BUDGET_MS = 30_000

export function accountSweepSettings(overrides: Partial<AccountSweepSettings> = {}): AccountSweepSettings {
  const settings = { ...ACCOUNT_SWEEP_DEFAULTS, ...overrides }
  if (!Number.isInteger(settings.everyMinutes) || settings.everyMinutes < 1 || settings.everyMinutes > 59)
    throw new Error('the credit sweep runs every 1 to 59 minutes')
  if (!Number.isInteger(settings.accountsPerRun) || settings.accountsPerRun < 1)
    throw new Error('the credit sweep asks at least one account a run')
  return settings
}

export function accountSweepCrontab(
  settings: Pick<AccountSweepSettings, 'everyMinutes'> = ACCOUNT_SWEEP_DEFAULTS,
): string {
  return `*/${settings.everyMinutes} * * * * ${ACCOUNT_SWEEP_TASK}`
}

/** What one run did: the metrics count it (src/platform/observability/background-metrics.ts). */
export interface AccountSweepRun {
  accountsAsked: number
  /** Accounts the provider gave no usable answer for. */
  accountsFailed: number
  /** Credits Rail did not have, recorded by this run. */
  creditsFound: number
  passEnded: boolean
}

/**
 * One run: the next batch of accounts after the place, each asked for its credits since the last
 * pass that asked every account without a failure. `clock` is the time Rail and the provider
 * share (the provider stamps credits by it), not a partner's sandbox clock.
 */
export async function sweepAccounts(
  deps: InboundDeps,
  settings: AccountSweepSettings,
  clock: Clock,
): Promise<AccountSweepRun> {
  const place = await selectPlace(deps.pool)
  const startedAt = clock.now()
  const archivedSince = new Date(startedAt.getTime() - settings.archivedSweptForDays * 86_400_000)
  const { batch, more } = await nextAccounts(deps.pool, place.after, archivedSince, settings.accountsPerRun)
  // Credits at or before this are taken; younger ones are left to their notice for now.
  const settledBy = new Date(startedAt.getTime() - settings.noticeGraceMs)
  const providers = new Map<string, ProviderProfile>()
  const run: AccountSweepRun = { accountsAsked: 0, accountsFailed: 0, creditsFound: 0, passEnded: false }
  let last = place.after
  const budgetEndsMs = performance.now() + RUN_BUDGET_MS
  for (const account of batch) {
    if (performance.now() > budgetEndsMs) break
    const provider = providers.get(account.provider) ?? (await getProvider(deps.pool, account.provider))
    providers.set(provider.name, provider)
    const found = await sweepAccount(deps, provider, account.accountNumber, place.since, settledBy)
    run.accountsAsked += 1
    if (found === undefined) run.accountsFailed += 1
    else run.creditsFound += found
    last = account
  }
  run.passEnded = !more && run.accountsAsked === batch.length
  await updatePlace(deps.pool, place, nextPlace(place, run, last, startedAt, settings.noticeGraceMs))
  return run
}

/**
 * Where the sweep stands after a run. A pass that ended without a failure moves `since` to its own
 * start (less the grace: credits younger than that were left); one with failures leaves it, so
 * the next pass asks again for what the failed accounts may hold.
 */
function nextPlace(
  place: SweepPlace,
  run: AccountSweepRun,
  last: ReceivingAccount | null,
  startedAt: Date,
  noticeGraceMs: number,
): SweepPlace {
  const passStartedAt = place.after === null ? startedAt : (place.passStartedAt ?? startedAt)
  const passFailures = (place.after === null ? 0 : place.passFailures) + run.accountsFailed
  if (!run.passEnded) return { after: last, since: place.since, passStartedAt, passFailures }
  const since = passFailures === 0 ? new Date(passStartedAt.getTime() - noticeGraceMs) : place.since
  return { after: null, since, passStartedAt: null, passFailures: 0 }
}

/**
 * The next accounts after `after`, virtual accounts' and wallets' together in (provider, account
 * number) order. `more`: accounts may remain after the batch.
 */
async function nextAccounts(
  pool: Pool,
  after: ReceivingAccount | null,
  archivedSince: Date,
  limit: number,
): Promise<{ batch: ReceivingAccount[]; more: boolean }> {
  const virtual = await receivingAccountsAfter(pool, after, archivedSince, limit)
  const wallets = await walletAccountsAfter(pool, after, limit)
  const merged = [...virtual, ...wallets].sort((a, b) =>
    a.provider === b.provider ? compare(a.accountNumber, b.accountNumber) : compare(a.provider, b.provider),
  )
  return {
    batch: merged.slice(0, limit),
    more: merged.length > limit || virtual.length === limit || wallets.length === limit,
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Asks the provider for one account's credits since `since` and records, through the intake a
 * notice goes through, each one credited by `settledBy` that Rail does not have. How many it
 * recorded; undefined when the provider gave no usable answer.
 */
async function sweepAccount(
  deps: InboundDeps,
  provider: ProviderProfile,
  accountNumber: string,
  since: Date | null,
  settledBy: Date,
): Promise<number | undefined> {
  const listed = await (await deps.providers.adapterFor(provider)).listCredits(accountNumber, since ?? undefined)
  if (listed.outcome !== 'successful') return undefined
  const settled = listed.value.filter(
    (credit) => credit.accountNumber === accountNumber && credit.creditedAt <= settledBy,
  )
  if (settled.length === 0) return 0
  const known = await selectKnownSessions(
    deps.pool,
    provider.name,
    settled.map((credit) => credit.sessionId),
  )
  let recorded = 0
  for (const credit of settled.filter((each: ProviderCredit) => !known.has(each.sessionId))) {
    // A notice (or a requery) that recorded it meanwhile wins: the session id decides.
    if (!(await recordCredit(deps.pool, provider.name, credit, 'sweep')).duplicate) recorded += 1
  }
  return recorded
}
