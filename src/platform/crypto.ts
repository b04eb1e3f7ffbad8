// Cryptographic helpers with no business words: sealing secrets at rest, random tokens, digests.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

const AES_KEY_BYTES = 32
const GCM_IV_BYTES = 12
const GCM_TAG_BYTES = 16

/**
 * Encrypts with AES-256-GCM. The output is iv ‖ tag ‖ ciphertext. `associatedData` binds the
 * ciphertext to its row (a sealed secret copied onto another row fails to open).
 */
export function seal(masterKey: Buffer, plaintext: string, associatedData: string): Buffer {
  assertKey(masterKey)
  const iv = randomBytes(GCM_IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv)
  cipher.setAAD(Buffer.from(associatedData, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext])
}

export function open(masterKey: Buffer, sealed: Buffer, associatedData: string): string {
  assertKey(masterKey)
  const iv = sealed.subarray(0, GCM_IV_BYTES)
  const tag = sealed.subarray(GCM_IV_BYTES, GCM_IV_BYTES + GCM_TAG_BYTES)
  const ciphertext = sealed.subarray(GCM_IV_BYTES + GCM_TAG_BYTES)
  const decipher = createDecipheriv('aes-256-gcm', masterKey, iv)
  decipher.setAAD(Buffer.from(associatedData, 'utf8'))
  decipher.setAuthTag(tag)
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')
}

function assertKey(key: Buffer): void {
  if (key.length !== AES_KEY_BYTES) throw new Error(`master key must be ${AES_KEY_BYTES} bytes`)
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A random string over [0-9A-Za-z]; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

export function sha256(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest()
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

export function hmacSha512Hex(key: string | Buffer, data: string | Buffer): string {
  return createHmac('sha512', key).update(data).digest('hex')
}

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  // Compare digests so that unequal lengths take the same path as equal ones.
  return timingSafeEqual(sha256(left), sha256(right)) && left.length === right.length
}
