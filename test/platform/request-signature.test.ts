// The one request-signature verifier: each outcome, both edges of the tolerance window on a clock
// the test sets, and a one-byte change in anything the signature covers refuses the request.
import { describe, expect, it } from 'vitest'
import { signRequest, TIMESTAMP_TOLERANCE_S } from '../../src/client/signing.ts'
import type { Clock } from '../../src/platform/clock.ts'
import {
  readSignatureHeaders,
  verifyRequestSignature,
  type SignedContent,
} from '../../src/platform/request-signature.ts'

const SECRET = 'rk_sec_verifier_test'
const NOW_S = 1_800_000_000
const clockAt = (unixS: number): Clock => ({ now: () => new Date(unixS * 1000) })

const CONTENT: SignedContent = {
  method: 'POST',
  pathWithQuery: '/api/v1/rail/outbound?x=1',
  body: '{"amountKobo":1000}',
}

function signedAt(timestampS: number, content: SignedContent = CONTENT, secret = SECRET) {
  const headers = signRequest({
    keyId: 'k',
    signingSecret: secret,
    method: content.method,
    pathWithQuery: content.pathWithQuery,
    body: content.body,
    timestampS,
  })
  return { timestamp: headers['X-Rail-Timestamp']!, signature: headers['X-Rail-Signature']! }
}

/** Verifies `content` with these headers, on a clock at NOW_S. */
function verify(content: SignedContent, headers: { timestamp: unknown; signature: unknown }) {
  return verifyRequestSignature({ secret: SECRET, clock: clockAt(NOW_S), ...content, ...headers })
}

/** `text` with the byte at `index` changed to another printable one. */
function flipByte(text: string, index: number): string {
  const code = text.charCodeAt(index)
  return text.slice(0, index) + String.fromCharCode(code === 0x41 ? 0x42 : 0x41) + text.slice(index + 1)
}

describe('verifyRequestSignature', () => {
  it('accepts a request signed now, and answers its timestamp', () => {
    expect(verify(CONTENT, signedAt(NOW_S))).toEqual({ ok: true, timestampS: NOW_S })
  })

  it('accepts a body given as bytes as well as text', () => {
    expect(verify({ ...CONTENT, body: Buffer.from(CONTENT.body as string, 'utf8') }, signedAt(NOW_S))).toEqual({
      ok: true,
      timestampS: NOW_S,
    })
  })

  it.each([
    ['no timestamp', { timestamp: undefined }],
    ['no signature', { signature: undefined }],
    ['an empty timestamp', { timestamp: '' }],
    ['an empty signature', { signature: '' }],
  ])('missing: %s', (_name, override) => {
    expect(verify(CONTENT, { ...signedAt(NOW_S), ...override })).toEqual({ ok: false, refusal: 'missing' })
  })

  it.each([
    ['a timestamp that is no number', { timestamp: 'yesterday' }],
    ['a timestamp in milliseconds past twelve digits', { timestamp: String(NOW_S * 1000 * 1000) }],
    ['a negative timestamp', { timestamp: `-${NOW_S}` }],
    ['a timestamp sent twice', { timestamp: [String(NOW_S), String(NOW_S)] }],
    ['a signature of another version', { signature: `v2=${'0'.repeat(64)}` }],
    ['a signature in upper-case hex', { signature: `v1=${'A'.repeat(64)}` }],
    ['a signature one hex digit short', { signature: `v1=${'0'.repeat(63)}` }],
  ])('malformed: %s', (_name, override) => {
    expect(verify(CONTENT, { ...signedAt(NOW_S), ...override })).toEqual({ ok: false, refusal: 'malformed' })
  })

  it('the window is ±tolerance seconds inclusive: its edges pass, one second past either refuses as stale', () => {
    expect(TIMESTAMP_TOLERANCE_S).toBe(300)
    for (const offsetS of [-TIMESTAMP_TOLERANCE_S, TIMESTAMP_TOLERANCE_S]) {
      expect(verify(CONTENT, signedAt(NOW_S + offsetS))).toEqual({ ok: true, timestampS: NOW_S + offsetS })
    }
    for (const offsetS of [-TIMESTAMP_TOLERANCE_S - 1, TIMESTAMP_TOLERANCE_S + 1]) {
      expect(verify(CONTENT, signedAt(NOW_S + offsetS))).toEqual({ ok: false, refusal: 'stale' })
    }
  })

  it('the window follows the injected clock, not the machine', () => {
    const headers = signedAt(NOW_S)
    const later = { secret: SECRET, ...CONTENT, ...headers }
    expect(verifyRequestSignature({ ...later, clock: clockAt(NOW_S + TIMESTAMP_TOLERANCE_S) }).ok).toBe(true)
    expect(verifyRequestSignature({ ...later, clock: clockAt(NOW_S + TIMESTAMP_TOLERANCE_S + 1) })).toEqual({
      ok: false,
      refusal: 'stale',
    })
    expect(verifyRequestSignature({ ...later, clock: clockAt(NOW_S), toleranceS: 0 }).ok).toBe(true)
  })

  it('a stale request is refused as stale even when its signature is right, before the signature is computed', () => {
    expect(readSignatureHeaders(String(NOW_S - 301), signedAt(NOW_S - 301).signature, clockAt(NOW_S))).toEqual({
      ok: false,
      refusal: 'stale',
    })
  })

  it('another secret is a bad signature', () => {
    expect(verify(CONTENT, signedAt(NOW_S, CONTENT, `${SECRET}x`))).toEqual({ ok: false, refusal: 'bad_signature' })
  })

  it('a one-byte change in the method, the path, the query or the body refuses', () => {
    const headers = signedAt(NOW_S)
    const changed: SignedContent[] = [
      { ...CONTENT, method: 'PUST' },
      { ...CONTENT, method: 'GET' },
      { ...CONTENT, pathWithQuery: flipByte(CONTENT.pathWithQuery, 5) },
      { ...CONTENT, pathWithQuery: CONTENT.pathWithQuery.replace('x=1', 'x=2') },
      { ...CONTENT, pathWithQuery: `${CONTENT.pathWithQuery}&` },
      { ...CONTENT, body: flipByte(CONTENT.body as string, 0) },
      { ...CONTENT, body: (CONTENT.body as string).replace('1000', '1001') },
      { ...CONTENT, body: `${CONTENT.body as string} ` },
      { ...CONTENT, body: '' },
    ]
    for (const content of changed) expect(verify(content, headers)).toEqual({ ok: false, refusal: 'bad_signature' })
  })

  it('a one-digit change in the timestamp refuses, though the new one is inside the window', () => {
    const { signature } = signedAt(NOW_S)
    expect(verify(CONTENT, { timestamp: String(NOW_S + 1), signature })).toEqual({
      ok: false,
      refusal: 'bad_signature',
    })
    expect(verify(CONTENT, { timestamp: String(NOW_S - 10), signature })).toEqual({
      ok: false,
      refusal: 'bad_signature',
    })
  })

  it('a one-byte change in the signature refuses', () => {
    const { timestamp, signature } = signedAt(NOW_S)
    const last = signature.at(-1) === '0' ? '1' : '0'
    expect(verify(CONTENT, { timestamp, signature: signature.slice(0, -1) + last })).toEqual({
      ok: false,
      refusal: 'bad_signature',
    })
  })

  it('the method is compared upper-cased, as the signer writes it', () => {
    expect(verify({ ...CONTENT, method: 'post' }, signedAt(NOW_S))).toEqual({ ok: true, timestampS: NOW_S })
  })
})
