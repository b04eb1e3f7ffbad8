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
