// The master key seals secrets at rest (AES-256-GCM). Production must supply RAIL_MASTER_KEY;
// a development install generates one once into <dataDir>/master.key (mode 0600).
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { ConfigError, type Config } from './config.ts'
import { readOrCreateSecretFile } from './embedded-db.ts'

export function loadMasterKey(config: Config): Buffer {
  if (config.masterKeyHex) return Buffer.from(config.masterKeyHex, 'hex')
  if (config.production) throw new ConfigError('RAIL_MASTER_KEY is required when NODE_ENV=production')
  const hex = readOrCreateSecretFile(path.join(config.dataDir, 'master.key'), () => randomBytes(32).toString('hex'))
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new ConfigError(`${path.join(config.dataDir, 'master.key')} does not hold a 32-byte hex key`)
  return Buffer.from(hex, 'hex')
}
