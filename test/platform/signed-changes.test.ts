// The rule for a signed change against the last one applied to the same object, table-driven.
import { describe, expect, it } from 'vitest'
import { RailError } from '../../src/platform/errors.ts'
import { requestHash } from '../../src/platform/idempotency.ts'
import { CHANGES_PER_SECOND_MAX, decideSignedChange, type SignedChanges } from '../../src/platform/signed-requests.ts'

const A = { callbackUrl: 'https://a.example/hooks' }
const B = { callbackUrl: 'https://b.example/hooks' }
const C = { callbackUrl: 'https://c.example/hooks' }
const signed = (signedAtS: number) => ({ signedAtS, signature: `v1=${'0'.repeat(64)}` })
const remembered = (signedAtS: number | null, ...bodies: unknown[]): SignedChanges => ({ signedAtS, bodyHashes: bodies.map(requestHash) })

function outcome(last: SignedChanges, signedAtS: number, body: unknown): string {
  try {
    const decision = decideSignedChange(last, signed(signedAtS), body)
    return decision.kind === 'apply' ? `apply@${decision.next.signedAtS}×${decision.next.bodyHashes.length}` : 'repeat'
  } catch (error) {
    if (!(error instanceof RailError)) throw error
    return `${error.code}${error.retryAfterS === undefined ? '' : ` retry ${error.retryAfterS}s`}`
  }
}

describe('decideSignedChange', () => {
  it.each([
    ['the first signed change', remembered(null), 100, A, 'apply@100×1'],
    ['a later second', remembered(100, A), 101, B, 'apply@101×1'],
    ['a later second, the same body', remembered(100, A), 101, A, 'apply@101×1'],
    ['an earlier second (a replay, or a request overtaken)', remembered(100, A), 99, B, 'stale_request'],
    ['an earlier second, the same body as the last', remembered(100, A), 99, A, 'stale_request'],
    ['the last change again, same second (an identical retry)', remembered(100, A, B), 100, B, 'repeat'],
    ['another change in the same second', remembered(100, A), 100, B, 'apply@100×2'],
    ['an earlier change of the same second after a later one', remembered(100, A, B), 100, A, 'stale_request retry 1s'],
    ['a third change in the same second', remembered(100, A, B), 100, C, 'apply@100×3'],
  ])('%s → %s', (_case, last, signedAtS, body, expected) => {
    expect(outcome(last, signedAtS, body)).toBe(expected)
  })

  it('keys order does not make another body', () => {
    expect(outcome(remembered(100, { name: 'x', archived: true }), 100, { archived: true, name: 'x' })).toBe('repeat')
  })

  it(`takes at most ${CHANGES_PER_SECOND_MAX} distinct changes per second`, () => {
    const full = remembered(100, ...Array.from({ length: CHANGES_PER_SECOND_MAX }, (_, n) => ({ callbackUrl: `https://${n}.example/` })))
    expect(outcome(full, 100, C)).toBe('stale_request retry 1s')
    expect(outcome(full, 101, C)).toBe('apply@101×1')
  })
})
