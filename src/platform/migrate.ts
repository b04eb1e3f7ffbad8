// Schema migrations: numbered, forward-only, plain SQL files in db/migrations, applied by the
// postgres-migrations library (it records a hash of each file and refuses an edited one, and
// serialises concurrent runs with an advisory lock). graphile-worker's own schema is migrated
// alongside, so the job queue exists wherever the tables do.
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Logger, runMigrations as runWorkerMigrations } from 'graphile-worker'
import { migrate } from 'postgres-migrations'
import type { Pool } from './db.ts'

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations')

export async function migrateDatabase(pool: Pool): Promise<void> {
  const client = await pool.connect()
  try {
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
  await pool.query(`ALTER TABLE graphile_worker._private_jobs SET (autovacuum_analyze_threshold = 500, autovacuum_analyze_scale_factor = 0.02)`)
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
  const exists = await pool.query<{ present: boolean }>(`SELECT to_regclass('public.migrations') IS NOT NULL AS present`)
  if (!exists.rows[0]?.present) return false
  const applied = await pool.query<{ id: number }>('SELECT id FROM migrations')
  const appliedIds = new Set(applied.rows.map((row) => row.id))
  return idsOnDisk.every((id) => appliedIds.has(id))
}

// graphile-worker logs every migration step at info level; start-up output stays readable without it.
const silentWorkerLogger = new Logger(() => () => {})
