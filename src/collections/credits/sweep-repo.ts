// SQL of the credit sweep's place (one row, db/migrations/0048_credit_sweep.sql): where the pass
// under way has got to, and since when each account is asked for its credits.
import type { Queryable } from '../../platform/db.ts'

export interface SweepPlace {
  /** The last account swept in the pass under way; null: the next run starts a pass. */
  after: { provider: string; accountNumber: string } | null
  /** Each account is asked for its credits at or after this time; null: every credit the provider lists. */
  since: Date | null
  passStartedAt: Date | null
  passFailures: number
}

interface Row {
  after_provider: string | null
  after_account_number: string | null
  since: Date | null
  pass_started_at: Date | null
  pass_failures: number
}

export async function selectPlace(db: Queryable): Promise<SweepPlace> {
  const result = await db.query<Row>(
    `SELECT after_provider, after_account_number, since, pass_started_at, pass_failures FROM inbound_credit_sweep WHERE id = 1`,
  )
  const row = result.rows[0]!
  return {
    after:
      row.after_provider === null ? null : { provider: row.after_provider, accountNumber: row.after_account_number! },
    since: row.since,
    passStartedAt: row.pass_started_at,
    passFailures: row.pass_failures,
  }
}

/**
 * Moves the place on from `from` (as this run read it) to `to`; false when another run moved it
 * first (that run swept the same accounts: what either found was recorded once, by session id).
 */
export async function updatePlace(db: Queryable, from: SweepPlace, to: SweepPlace): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE inbound_credit_sweep SET after_provider = $1, after_account_number = $2, since = $3, pass_started_at = $4, pass_failures = $5
      WHERE id = 1 AND after_provider IS NOT DISTINCT FROM $6 AND after_account_number IS NOT DISTINCT FROM $7 AND pass_started_at IS NOT DISTINCT FROM $8`,
    [
      to.after?.provider ?? null,
      to.after?.accountNumber ?? null,
      to.since,
      to.passStartedAt,
      to.passFailures,
      from.after?.provider ?? null,
      from.after?.accountNumber ?? null,
      from.passStartedAt,
    ],
  )
  return rowCount === 1
}
