// Identifiers. Object ids are UUIDv7: unique without coordination, and ordered by creation time,
// so that cursor pagination by id follows creation order and index inserts stay local.
import { randomBytes } from 'node:crypto'

/** The last timestamp and the 12-bit counter under it: ids made by one process strictly increase. */
let lastMs = 0
let counter = 0
const COUNTER_MAX = 0xfff

/**
 * A UUIDv7. Within one millisecond, the 12 bits after the version (`rand_a`) count up from a
 * random start (RFC 9562 §6.2, method 1), so that two ids made one after the other sort in that
 * order; when they run out, the timestamp moves on by a millisecond.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  // wall time: ids order rows, they decide nothing
  if (nowMs > lastMs) {
    lastMs = nowMs
    counter = randomBytes(2).readUInt16BE(0) & 0x7ff // start in the lower half: room to count
  } else if (counter < COUNTER_MAX) {
    counter++
  } else {
    lastMs++
    counter = 0
  }
  const bytes = randomBytes(16)
  bytes.writeUIntBE(lastMs, 0, 6) // 48-bit big-endian unix milliseconds
  bytes[6] = 0x70 | (counter >> 8) // version 7, then the counter's high 4 bits
  bytes[7] = counter & 0xff
  bytes[8] = (bytes[8]! & 0x3f) | 0x80 // RFC 9562 variant
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
/** The unix milliseconds a UUIDv7 was made at (its first 48 bits). */
export function uuidv7Ms(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16)
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
