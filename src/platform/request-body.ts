// How request bodies are read: kept raw for the signature check, then judged — JSON only, valid
// UTF-8, nested no deeper than a limit, well-formed — before anything walks them. A judgment is
// remembered rather than thrown, so that it is reported after authentication (src/partners/auth.ts):
// an unauthenticated caller gets the same 401 whatever its body holds.
import type { FastifyInstance } from 'fastify'
import { fieldError, RailError } from './errors.ts'

/**
 * How many arrays and objects a body may nest, one inside another. Rail's deepest request nests
 * four; a partner's own `metadata` gets room to nest a few more. Anything that walks a body by
 * recursion (the input check, validation, the idempotency fingerprint) then stays far inside the
 * stack: 100,000 levels, which fit in 200 kB, overflowed it (a 500) before this limit.
 */
export const JSON_DEPTH_MAX = 32

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received (null when there was none): signatures cover these bytes. */
    rawBody: Buffer | null
    /** Why the body was refused (not JSON, not UTF-8, too deep, malformed); reported after authentication. */
    bodyRefusal: RailError | undefined
    /**
     * While set, a failure to read the body (over the size limit, shorter than declared) is answered
     * with this instead. Authentication sets it once it has found the credential a signature names
     * and clears it once the signature over the body is checked: until then a refusal must not
     * tell a known key id from an unknown one.
     */
    unverifiedBodyAnswer: RailError | undefined
  }
}

/** Strict UTF-8: a byte sequence that is not UTF-8 is refused, never replaced by U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

export function installBodyParsers(app: FastifyInstance): void {
  app.decorateRequest('rawBody', null)
  app.decorateRequest('bodyRefusal', undefined)
  app.decorateRequest('unverifiedBodyAnswer', undefined)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body
    if (body.length === 0) return done(null, undefined)
    const parsed = parseJsonBody(body)
    if (parsed instanceof RailError) request.bodyRefusal = parsed
    done(null, parsed instanceof RailError ? undefined : parsed)
  })
  // Any other media type is refused; the raw bytes are still read so that the signature check
  // sees what was sent, then the request fails with 415 once it is authenticated.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body
    request.bodyRefusal = new RailError('unsupported_media_type', 'Request bodies must be application/json')
    done(null, undefined)
  })
  // A server whose routes take no authentication hook still never hands a refused body to a handler.
  app.addHook('preHandler', async (request) => {
    if (request.bodyRefusal) throw request.bodyRefusal
  })
}

/** The parsed body, or why it is refused. */
export function parseJsonBody(body: Buffer): unknown {
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    return new RailError('invalid_json', 'Malformed JSON body: it is not valid UTF-8')
  }
  if (nestingDepth(body, JSON_DEPTH_MAX) > JSON_DEPTH_MAX) {
    return fieldError('body', `must not nest arrays and objects more than ${JSON_DEPTH_MAX} levels deep`)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    return new RailError('invalid_json', `Malformed JSON body: ${(error as Error).message}`)
  }
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPENERS = new Set([0x5b, 0x7b]) // [ {
const CLOSERS = new Set([0x5d, 0x7d]) // ] }

/**
 * How deep the JSON text's arrays and objects nest, counted by one pass over the bytes (no
 * recursion: the point is to judge a body before anything recursive sees it), stopping once past
 * `stopAfter`. Brackets inside strings do not count; UTF-8 never puts an ASCII byte inside a
 * multi-byte character, so bytes are enough. Malformed text is left to the parser.
 */
export function nestingDepth(bytes: Uint8Array, stopAfter: number): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!
    if (inString) {
      if (byte === BACKSLASH) index++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) {
      inString = true
    } else if (OPENERS.has(byte)) {
      depth++
      if (depth > deepest) deepest = depth
      if (deepest > stopAfter) return deepest
    } else if (CLOSERS.has(byte)) {
      depth--
    }
  }
  return deepest
}
