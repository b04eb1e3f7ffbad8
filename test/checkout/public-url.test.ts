// PUBLIC_URL: the base of every checkoutUrl, checked when the configuration is read.
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/platform/config.ts'
import { checkoutPath } from '../../src/platform/public-url.ts'

describe('PUBLIC_URL', () => {
  it('is unset by default (the server then uses its own address) and drops a trailing slash', () => {
    expect(loadConfig({}).publicUrl).toBeUndefined()
    expect(loadConfig({ PUBLIC_URL: '  ' }).publicUrl).toBeUndefined()
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example.com/' }).publicUrl).toBe('https://pay.example.com')
    expect(loadConfig({ PUBLIC_URL: 'https://example.com/rail' }).publicUrl).toBe('https://example.com/rail')
  })

  it('refuses anything but an http(s) URL without query or fragment', () => {
    for (const value of [
      'pay.example.com',
      'ftp://pay.example.com',
      'https://pay.example.com/?a=1',
      'https://pay.example.com/#top',
      'javascript:alert(1)',
    ]) {
      expect(() => loadConfig({ PUBLIC_URL: value }), value).toThrow(/PUBLIC_URL/)
    }
  })

  it('puts the token in the path, encoded', () => {
    expect(checkoutPath('cht_abc-_1')).toBe('/checkout/cht_abc-_1')
    expect(checkoutPath('cht_abc', 'pay')).toBe('/pay/cht_abc')
  })
})
