import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { constantTimeEqual, open, randomBase62, seal } from '../../src/platform/crypto.ts'
import { uuidv7, uuidv7Ms } from '../../src/platform/ids.ts'

describe('sealing', () => {
  const key = randomBytes(32)
  it('round-trips and refuses tampering, another key or another row', () => {
    const sealed = seal(key, 'secret value', 'row-1')
    expect(open(key, sealed, 'row-1')).toBe('secret value')
    expect(() => open(key, sealed, 'row-2')).toThrow()
    expect(() => open(randomBytes(32), sealed, 'row-1')).toThrow()
    const tampered = Buffer.from(sealed)
    tampered[tampered.length - 1]! ^= 1
    expect(() => open(key, tampered, 'row-1')).toThrow()
  })
  it('refuses a key of the wrong size', () => {
    expect(() => seal(randomBytes(16), 'x', 'y')).toThrow(/32 bytes/)
  })
})

describe('tokens and ids', () => {
  it('randomBase62 has the asked length and alphabet', () => {
    const token = randomBase62(64)
    expect(token).toMatch(/^[0-9A-Za-z]{64}$/)
  })
  it('constantTimeEqual compares exactly', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true)
    expect(constantTimeEqual('abc', 'abd')).toBe(false)
    expect(constantTimeEqual('abc', 'abcd')).toBe(false)
  })
  it('uuidv7 is a version-7 UUID ordered by time', () => {
    const first = uuidv7(1_700_000_000_000)
    const second = uuidv7(1_700_000_000_001)
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(first < second).toBe(true)
  })
  it('uuidv7Ms reads back the time of a UUIDv7', () => {
    const before = Date.now()
    const ms = uuidv7Ms(uuidv7())
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(Date.now() + 100)
    expect(uuidv7Ms('0190a1b2-c3d4-7000-8000-000000000000')).toBe(0x0190a1b2c3d4)
  })
  it('uuidv7 made one after the other, within one millisecond, still sort in that order', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidv7())
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    const sameMs = Array.from({ length: 5_000 }, () => uuidv7(1_600_000_000_000)) // a clock that stands still
    expect([...sameMs].sort()).toEqual(sameMs)
    for (const id of sameMs) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})
