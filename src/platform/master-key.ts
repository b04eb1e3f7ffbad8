// The master key seals secrets at rest (AES-256-GCM). Production must supply RAIL_MASTER_KEY;
// a development install generates one once into <dataDir>/master.key (mode 0600).
//
// `rail api` and `rail worker` run as several processes, often on several hosts, which must all
// open what any one of them sealed: each must be given the same RAIL_MASTER_KEY. A master.key
// file is not accepted there, even an existing one, since nothing shows that the other processes
// read that same file (a file each host made for itself is exactly the failure to prevent).
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { ConfigError, type Config } from './config.ts'
import { open, seal } from './crypto.ts'
import type { Queryable } from './db.ts'
import { readOrCreateSecretFile } from './embedded-db.ts'

/**
 * 'own': one process of its own (`rail serve`, the CLI) may use or make the dev key file.
 * 'shared': a process among others (`rail api`, `rail worker`) needs RAIL_MASTER_KEY.
 */
export type MasterKeyUse = 'own' | 'shared'

export const SHARED_MASTER_KEY_REQUIRED =
  "RAIL_MASTER_KEY is required for `rail api` and `rail worker`: every process must seal and open secrets with the same key (give each one the same 64 hex characters; a development install can reuse `rail serve`'s with RAIL_MASTER_KEY=$(cat .rail/master.key))"

export function loadMasterKey(config: Config, use: MasterKeyUse = 'own'): Buffer {
  if (config.masterKeyHex) return Buffer.from(config.masterKeyHex, 'hex')
  if (config.production) throw new ConfigError('RAIL_MASTER_KEY is required when NODE_ENV=production')
  if (use === 'shared') throw new ConfigError(SHARED_MASTER_KEY_REQUIRED)
  const hex = readOrCreateSecretFile(path.join(config.dataDir, 'master.key'), () => randomBytes(32).toString('hex'))
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new ConfigError(`${path.join(config.dataDir, 'master.key')} does not hold a 32-byte hex key`)
  return Buffer.from(hex, 'hex')
}

/** What master_key_check seals, and the row it is bound to: opening it proves a key is the database's. */
const CHECK_PLAINTEXT = 'rail master key check'
const CHECK_ASSOCIATED_DATA = 'master_key_check'

export const MASTER_KEY_MISMATCH =
  "this master key is not the one the database's secrets are sealed with: every process and command on one database must be given the same key (RAIL_MASTER_KEY; the data directory's master.key only for `rail serve` and commands on its own database)"

/**
 * A secret the database kept sealed before the key check was recorded, and what it is bound to:
 * partners own them (their oldest signing secret, bound to its credential's id) and hand the read
 * over, since a library imports no feature.
 */
export type OlderSealedSecret = (db: Queryable) => Promise<{ sealed: Buffer; associatedData: string } | undefined>

/**
 * Refuses a master key other than the one the database's secrets are sealed with. The first
 * process on a database records a value sealed with its key, and every later one must open it; two
 * first processes racing with different keys leave one record, and the other is refused. A
 * database holding secrets sealed before the record was kept is probed first: the key must open
 * `olderSecret` (one of its partners' signing secrets).
 */
export async function assertMasterKeyOfDatabase(
  db: Queryable,
  masterKey: Buffer,
  olderSecret: OlderSealedSecret,
): Promise<void> {
  const recorded = await db.query<{ sealed: Buffer }>(`SELECT sealed FROM master_key_check`)
  if (recorded.rows[0] === undefined) {
    const older = await olderSecret(db)
    if (older !== undefined && !opens(masterKey, older.sealed, older.associatedData))
      throw new ConfigError(MASTER_KEY_MISMATCH)
    await db.query(`INSERT INTO master_key_check (sealed) VALUES ($1) ON CONFLICT (only_row) DO NOTHING`, [
      seal(masterKey, CHECK_PLAINTEXT, CHECK_ASSOCIATED_DATA),
    ])
    return assertMasterKeyOfDatabase(db, masterKey, olderSecret)
  }
  if (!opens(masterKey, recorded.rows[0].sealed, CHECK_ASSOCIATED_DATA)) throw new ConfigError(MASTER_KEY_MISMATCH)
}

function opens(masterKey: Buffer, sealed: Buffer, associatedData: string): boolean {
  try {
    open(masterKey, sealed, associatedData)
    return true
  } catch {
    return false
  }
}
