// Schema migrations: numbered, forward-only, plain SQL files in db/migrations, applied by the
// postgres-migrations library (it records a hash of each file and refuses an edited one, and
// serialises concurrent runs with an advisory lock). graphile-worker's own schema is migrated
// alongside, so the job queue exists wherever the tables do.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Logger, runMigrations as runWorkerMigrations } from 'graphile-worker'
import { migrate } from 'postgres-migrations'
import type { Pool, Queryable } from './db.ts'

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations')

/**
 * Migrations whose comments were reworded after they shipped, the SQL unchanged: the hash each had
 * before (sha1 of file name and contents, as postgres-migrations computes it). The library refuses
 * a file whose hash changed, so a database that applied one of these is told its new hash first.
 *
 * This list must never grow. A shipped migration is history and is never edited again, not even
 * its comments (CONTRIBUTING.md, "Adding a migration"); no check reads db/migrations for wording
 * any more. The entries stay because a database migrated before the rewording may still exist, and
 * without them it would refuse to start; they may go only once no such database can.
 */
const REWORDED_MIGRATIONS: Readonly<Record<string, string>> = {
  '0004_providers.sql': '283a3b071bb63e053f9a3060d39babeec8b32aee',
  '0007_wallets.sql': '1e459cdb8a1efd9386152e11e0ecbc7f2321a169',
  '0008_wallet_moves.sql': '98c3ec6d9199032e862f2378e0383d735744a976',
  '0009_bank_payouts.sql': '3a11a3bb4c4c99f364c408380de8bfa8ca4edece',
  '0014_events.sql': 'a348129a3d7ded87d2f11686f137dcd592876b98',
  '0015_outbound_transfers.sql': '9ba37bac38e97173ae99bc9326db41276bac77f9',
  '0016_counterparties.sql': 'd3261dfc70fb3f8052b9f150d3e1e528d17ed4d9',
  '0017_collections.sql': '59346e71043dfbd3213f76ca83e92aed706f636f',
  '0018_invoices.sql': '863872928fb2bc04a05a5d8367ab3012da9b4a8e',
  '0019_escrow.sql': '900a59b79e29a7fbb4fb5249557154419257bfed',
  '0033_wallet_funding_and_unmatched.sql': 'edf3cfde6673b16809b5d1274e9cc333e4be0808',
}

/** The hash postgres-migrations records for a migration file. */
export function migrationFileHash(fileName: string): string {
  return createHash('sha1')
    .update(fileName + readFileSync(path.join(MIGRATIONS_DIR, fileName), 'utf8'), 'utf8')
    .digest('hex')
}

/** A database that applied a reworded migration's earlier text records its present hash (see REWORDED_MIGRATIONS). */
async function acceptRewordedMigrations(client: Queryable): Promise<void> {
  const exists = await client.query<{ present: boolean }>(
    `SELECT to_regclass('public.migrations') IS NOT NULL AS present`,
  )
  if (!exists.rows[0]?.present) return
  const files = Object.entries(REWORDED_MIGRATIONS)
  await client.query(
    `UPDATE migrations m SET hash = r.hash FROM unnest($1::int[], $2::text[], $3::text[]) AS r(id, previous_hash, hash)
      WHERE m.id = r.id AND m.hash = r.previous_hash`,
    [
      files.map(([fileName]) => Number.parseInt(fileName, 10)),
      files.map(([, previousHash]) => previousHash),
      files.map(([fileName]) => migrationFileHash(fileName)),
    ],
  )
}

export async function migrateDatabase(pool: Pool): Promise<void> {
  const client = await pool.connect()
  try {
    await acceptRewordedMigrations(client)
    await migrate({ client }, MIGRATIONS_DIR)
  } finally {
    client.release()
  }
  await runWorkerMigrations({ pgPool: pool, logger: silentWorkerLogger })
  await keepJobQueueStatisticsFresh(pool)
}

/**
 * graphile-worker's add_job looks for an earlier job with the same key in every call, even when
 * the new job has none; with no statistics on the queue table (a new database, or a queue that grew
 * from empty since the last analyze) PostgreSQL plans that look-up as a scan of the whole queue,
 * and a job costs ~0.1 ms more per thousand jobs waiting (docs/performance.md). Analyzing after a
 * few hundred changes, not after 10% of the table, keeps the plan an index look-up.
 */
async function keepJobQueueStatisticsFresh(pool: Pool): Promise<void> {
  await pool.query(
    `ALTER TABLE graphile_worker._private_jobs SET (autovacuum_analyze_threshold = 500, autovacuum_analyze_scale_factor = 0.02)`,
  )
}

/** Migration ids present as files, in order. */
export function migrationIdsOnDisk(): number[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .map((name) => Number.parseInt(name, 10))
    .sort((a, b) => a - b)
}

/** True when every migration file has been applied (used by /readyz). */
export async function migrationsAreCurrent(pool: Pool, idsOnDisk: number[]): Promise<boolean> {
  const exists = await pool.query<{ present: boolean }>(
    `SELECT to_regclass('public.migrations') IS NOT NULL AS present`,
  )
  if (!exists.rows[0]?.present) return false
  const applied = await pool.query<{ id: number }>('SELECT id FROM migrations')
  const appliedIds = new Set(applied.rows.map((row) => row.id))
  return idsOnDisk.every((id) => appliedIds.has(id))
}

// graphile-worker logs every migration step at info level; start-up output stays readable without it.
const silentWorkerLogger = new Logger(() => () => {})
