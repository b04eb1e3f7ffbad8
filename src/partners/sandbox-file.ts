// The development sandbox partner's credentials, kept by `rail serve` in <dataDir>/sandbox-partner.json
// (0600, beside the master key) so that a newcomer's scripts can sign calls at once. Rotating one of
// that partner's credentials with the CLI writes the new one here too, so the file, the start
// banner and the example scripts never go on with a credential that was replaced.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { PartnerCredentials } from './repo.ts'

export const SANDBOX_PARTNER_FILE = 'sandbox-partner.json'

export function sandboxPartnerFile(dataDir: string): string {
  return path.join(dataDir, SANDBOX_PARTNER_FILE)
}

export function readSandboxPartner(dataDir: string): PartnerCredentials | undefined {
  const file = sandboxPartnerFile(dataDir)
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as PartnerCredentials) : undefined
}

export function writeSandboxPartner(dataDir: string, credentials: PartnerCredentials): void {
  writeFileSync(sandboxPartnerFile(dataDir), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
}

/** After a rotation: the saved partner's file takes the new credential. The file's path when it was the partner saved there. */
export function saveRotatedCredential(
  dataDir: string,
  partnerId: string,
  issued: Partial<Omit<PartnerCredentials, 'partnerId'>>,
): string | undefined {
  const saved = readSandboxPartner(dataDir)
  if (!saved || saved.partnerId !== partnerId) return undefined
  writeSandboxPartner(dataDir, { ...saved, ...issued })
  return sandboxPartnerFile(dataDir)
}
