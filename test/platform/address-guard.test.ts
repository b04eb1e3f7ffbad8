// The SSRF guard, as a table: every blocked form the issue names, each spelling of loopback, and
// what the sandbox loopback allowance changes.
import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import {
  checkCallbackUrl,
  classifyAddress,
  guardedLookup,
  type CallbackPolicy,
} from '../../src/platform/address-guard.ts'

const LIVE: CallbackPolicy = { requireHttps: true, allowLoopback: false }
const SANDBOX_LOOPBACK: CallbackPolicy = { requireHttps: false, allowLoopback: true }
const SANDBOX_STRICT: CallbackPolicy = { requireHttps: false, allowLoopback: false }

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'], // IPv4-mapped, dotted
    ['::ffff:7f00:1', 'loopback'], // IPv4-mapped, hex
    ['10.0.0.1', 'blocked'],
    ['10.255.255.255', 'blocked'],
    ['172.16.0.1', 'blocked'],
    ['172.31.255.255', 'blocked'],
    ['192.168.1.1', 'blocked'],
    ['100.64.0.1', 'blocked'],
    ['100.127.255.255', 'blocked'],
    ['169.254.169.254', 'blocked'], // cloud metadata
    ['0.0.0.0', 'blocked'],
    ['0.1.2.3', 'blocked'],
    ['224.0.0.1', 'blocked'],
    ['255.255.255.255', 'blocked'],
    ['::', 'blocked'],
    ['::127.0.0.1', 'blocked'], // IPv4-compatible (deprecated)
    ['fc00::1', 'blocked'],
    ['fd12:3456::1', 'blocked'],
    ['fe80::1', 'blocked'],
    ['fe80::1%eth0', 'blocked'],
    ['::ffff:10.0.0.1', 'blocked'],
    ['::ffff:a9fe:a9fe', 'blocked'], // mapped 169.254.169.254
    ['::ffff:192.168.0.1', 'blocked'],
    ['64:ff9b::a9fe:a9fe', 'blocked'], // NAT64 of the metadata address
    ['64:ff9b::10.0.0.1', 'blocked'], // NAT64, dotted
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'], // IPv4-translated (SIIT), dotted
    ['::ffff:0:7f00:1', 'loopback'], // IPv4-translated, hex
    ['::ffff:0:10.0.0.1', 'blocked'],
    ['::ffff:0:169.254.169.254', 'blocked'],
    ['0:0:0:0:ffff:0:c0a8:1', 'blocked'], // translated 192.168.0.1, written out
    ['::ffff:0:8.8.8.8', 'public'],
    ['::10.0.0.1', 'blocked'], // IPv4-compatible
    ['::8.8.8.8', 'blocked'], // IPv4-compatible, whatever it carries
    ['2002:7f00:1::', 'blocked'], // 6to4 of loopback
    ['ff02::1', 'blocked'],
    ['8.8.8.8', 'public'],
    ['100.63.255.255', 'public'],
    ['172.32.0.1', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['not-an-address', 'blocked'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected)
  })
})

describe('checkCallbackUrl', () => {
  const cases: [string, CallbackPolicy, boolean][] = [
    // Every spelling of loopback: refused in live mode and without the allowance.
    ['http://127.0.0.1/hook', SANDBOX_STRICT, false],
    ['http://2130706433/hook', SANDBOX_STRICT, false], // decimal
    ['http://0x7f000001/hook', SANDBOX_STRICT, false], // hex
    ['http://0177.0.0.1/hook', SANDBOX_STRICT, false], // octal
    ['http://017700000001/hook', SANDBOX_STRICT, false], // octal, one number
    ['http://127.1/hook', SANDBOX_STRICT, false], // short form
    ['http://[::1]/hook', SANDBOX_STRICT, false],
    ['http://[::ffff:127.0.0.1]/hook', SANDBOX_STRICT, false],
    ['http://[::ffff:7f00:1]/hook', SANDBOX_STRICT, false],
    ['http://[::ffff:0:127.0.0.1]/hook', SANDBOX_STRICT, false], // IPv4-translated
    ['http://[64:ff9b::127.0.0.1]/hook', SANDBOX_STRICT, false], // NAT64
    ['http://[::127.0.0.1]/hook', SANDBOX_STRICT, false], // IPv4-compatible
    ['http://127.0.0.1./hook', SANDBOX_STRICT, false], // trailing dot
    ['https://127.0.0.1/hook', LIVE, false],
    // The sandbox allowance admits loopback, and only loopback.
    ['http://127.0.0.1:9000/hook', SANDBOX_LOOPBACK, true],
    ['http://2130706433/hook', SANDBOX_LOOPBACK, true],
    ['http://[::1]:9000/hook', SANDBOX_LOOPBACK, true],
    ['http://10.0.0.5/hook', SANDBOX_LOOPBACK, false],
    ['http://167772165/hook', SANDBOX_LOOPBACK, false], // 10.0.0.5 in decimal
    ['http://012.0.0.5/hook', SANDBOX_LOOPBACK, false], // 10.0.0.5 in octal
    ['http://169.254.169.254/latest/meta-data', SANDBOX_LOOPBACK, false],
    ['http://0xa9fea9fe/latest/meta-data', SANDBOX_LOOPBACK, false],
    ['http://[fe80::1]/hook', SANDBOX_LOOPBACK, false],
    ['http://[fd00::1]/hook', SANDBOX_LOOPBACK, false],
    ['http://[::ffff:169.254.169.254]/hook', SANDBOX_LOOPBACK, false],
    ['http://[::ffff:0:169.254.169.254]/hook', SANDBOX_LOOPBACK, false],
    ['https://[::ffff:0:a9fe:a9fe]/hook', LIVE, false],
    ['https://[::ffff:0:10.1.2.3]/hook', LIVE, false],
    ['http://[64:ff9b::192.168.0.1]/hook', SANDBOX_LOOPBACK, false],
    ['http://100.64.1.1/hook', SANDBOX_LOOPBACK, false],
    ['http://172.20.0.1/hook', SANDBOX_LOOPBACK, false],
    ['http://192.168.0.10/hook', SANDBOX_LOOPBACK, false],
    ['http://0.0.0.0/hook', SANDBOX_LOOPBACK, false],
    // Schemes and credentials.
    ['http://8.8.8.8/hook', LIVE, false],
    ['https://8.8.8.8/hook', LIVE, true],
    ['ftp://8.8.8.8/hook', SANDBOX_LOOPBACK, false],
    ['https://user:pass@8.8.8.8/hook', LIVE, false],
    ['not a url', LIVE, false],
  ]
  it.each(cases)('%s → %s', async (url, policy, allowed) => {
    const check = await checkCallbackUrl(url, policy)
    expect(check.ok).toBe(allowed)
  })

  const resolvesTo =
    (...addresses: string[]) =>
    async (): Promise<LookupAddress[]> =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))

  it('a name is judged by every address it resolves to', async () => {
    expect(
      (await checkCallbackUrl('https://hooks.example.com/x', LIVE, { resolve: resolvesTo('93.184.216.34') })).ok,
    ).toBe(true)
    const mixed = await checkCallbackUrl('https://hooks.example.com/x', LIVE, {
      resolve: resolvesTo('93.184.216.34', '10.1.2.3'),
    })
    expect(mixed).toEqual({ ok: false, reason: 'host hooks.example.com resolves to a private or reserved address' })
    expect((await checkCallbackUrl('https://hooks.example.com/x', LIVE, { resolve: resolvesTo('::1') })).ok).toBe(false)
    expect((await checkCallbackUrl('http://localhost:8080/x', SANDBOX_STRICT)).ok).toBe(false)
    expect((await checkCallbackUrl('http://localhost:8080/x', SANDBOX_LOOPBACK)).ok).toBe(true)
  })

  it('localhost and names under it are loopback whatever the resolver says, with or without a trailing dot', async () => {
    const unknown = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
    }
    for (const url of [
      'http://localhost./x',
      'http://LOCALHOST../x',
      'http://hooks.localhost/x',
      'http://hooks.localhost./x',
      'http://localhost:9000/x',
    ]) {
      expect((await checkCallbackUrl(url, SANDBOX_STRICT, { resolve: unknown, allowUnresolved: true })).ok, url).toBe(
        false,
      )
      expect(
        (await checkCallbackUrl(url.replace('http:', 'https:'), LIVE, { resolve: unknown, allowUnresolved: true })).ok,
        url,
      ).toBe(false)
      expect((await checkCallbackUrl(url, SANDBOX_LOOPBACK, { resolve: unknown, allowUnresolved: true })).ok, url).toBe(
        true,
      )
    }
    // A name that merely contains the word is an ordinary name.
    const resolvesPublic = async (): Promise<LookupAddress[]> => [{ address: '93.184.216.34', family: 4 }]
    expect((await checkCallbackUrl('https://localhost.example.com/x', LIVE, { resolve: resolvesPublic })).ok).toBe(true)
  })

  it('a name that does not resolve passes at registration only when allowed to', async () => {
    const fails = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
    }
    expect((await checkCallbackUrl('https://nowhere.invalid/x', LIVE, { resolve: fails })).ok).toBe(false)
    expect(
      (await checkCallbackUrl('https://nowhere.invalid/x', LIVE, { resolve: fails, allowUnresolved: true })).ok,
    ).toBe(true)
  })
})

describe('guardedLookup (the connection resolves through the guard)', () => {
  it('refuses a name resolving to loopback unless allowed, and hands back the checked addresses', async () => {
    const lookup = (policy: CallbackPolicy) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
        guardedLookup(policy)('localhost', { all: true }, (error, address) => resolve({ error, address })),
      )
    const refused = await lookup(SANDBOX_STRICT)
    expect(refused.error?.code).toBe('ERAILBLOCKED')
    const allowed = await lookup(SANDBOX_LOOPBACK)
    expect(allowed.error).toBeNull()
    expect((allowed.address as LookupAddress[]).every((a) => classifyAddress(a.address) === 'loopback')).toBe(true)
  })
})
