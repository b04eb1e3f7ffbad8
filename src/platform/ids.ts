// Identifiers. Object ids are UUIDv7: unique without coordination, and ordered by creation time,
// so that cursor pagination by id follows creation order and index inserts stay local.
import { randomBytes } from 'node:crypto'

export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16)
  bytes.writeUIntBE(nowMs, 0, 6) // 48-bit big-endian unix milliseconds
  bytes[6] = (bytes[6]! & 0x0f) | 0x70 // version 7
  bytes[8] = (bytes[8]! & 0x3f) | 0x80 // RFC 9562 variant
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
