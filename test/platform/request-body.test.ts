// How a JSON body is judged before anything walks it: strict UTF-8, and its nesting counted by one
// pass over the bytes (strings and escapes do not count). Over HTTP in test/platform/http.test.ts.
import { describe, expect, it } from 'vitest'
import { RailError } from '../../src/platform/errors.ts'
import { JSON_DEPTH_MAX, nestingDepth, parseJsonBody } from '../../src/platform/request-body.ts'

const depthOf = (text: string) => nestingDepth(Buffer.from(text), 1_000)

describe('nestingDepth', () => {
  it.each([
    ['1', 0],
    ['{}', 1],
    ['{"a":[1,{"b":[]}]}', 4],
    ['[[],[],[[]]]', 3],
    ['{"a":"[[[[{{{{"}', 1], // brackets inside a string
    ['{"a":"\\"[[[["}', 1], // an escaped quote does not end the string
    ['{"a":"\\\\","b":[[]]}', 3], // an escaped backslash does not escape the quote after it
    ['["é[", ["ü"]]', 2], // multi-byte characters hold no ASCII byte
  ])('%s nests %i deep', (text, depth) => {
    expect(depthOf(text)).toBe(depth)
  })

  it('stops counting once past the limit it was given', () => {
    expect(nestingDepth(Buffer.from('['.repeat(1_000_000)), 5)).toBe(6)
  })
})

describe('parseJsonBody', () => {
  const refusal = (value: unknown) =>
    value instanceof RailError ? { code: value.code, message: value.message } : undefined

  it('parses well-formed JSON nested up to the limit', () => {
    const text = `${'['.repeat(JSON_DEPTH_MAX)}${']'.repeat(JSON_DEPTH_MAX)}`
    expect(parseJsonBody(Buffer.from(text))).toEqual(JSON.parse(text))
    expect(parseJsonBody(Buffer.from('{"name":"Ọbáfẹ́mi"}'))).toEqual({ name: 'Ọbáfẹ́mi' })
  })

  it('refuses one level more, and 100,000 levels, without walking them', () => {
    for (const depth of [JSON_DEPTH_MAX + 1, 100_000]) {
      expect(refusal(parseJsonBody(Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`)))?.code).toBe(
        'validation_error',
      )
    }
  })

  it('refuses bytes that are not UTF-8 instead of reading them as U+FFFD: 0xFF and 0xFE are not one reference', () => {
    for (const bytes of [[0xff], [0xfe], [0xc3], [0xed, 0xa0, 0x80] /* an encoded surrogate */]) {
      const body = Buffer.from([...Buffer.from('{"reference":"ref-'), ...bytes, ...Buffer.from('"}')])
      expect(refusal(parseJsonBody(body))).toEqual({
        code: 'invalid_json',
        message: 'Malformed JSON body: it is not valid UTF-8',
      })
    }
  })

  it('refuses malformed JSON with the parser’s reason', () => {
    expect(refusal(parseJsonBody(Buffer.from('{"a":')))?.code).toBe('invalid_json')
  })
})
