// The SSRF guard for callback URLs (docs/design.md §9). A callback URL is a partner-chosen address that
// Rail's own servers connect to, so it must not reach Rail's network: loopback, private ranges,
// link-local (cloud metadata lives at 169.254.169.254), and every spelling of those. The URL is
// checked when it is set and again at each delivery, and the delivery connects only to addresses
// checked by the same lookup that resolved them (see guardedLookup), so DNS cannot answer one
// address to the check and another to the connection.
import { promises as dns, type LookupAddress } from 'node:dns'
import net from 'node:net'

export interface CallbackPolicy {
  /** Live partners: only https URLs. */
  requireHttps: boolean
  /** Sandbox with RAIL_ALLOW_LOOPBACK_CALLBACKS=1: local receivers (127.0.0.0/8, ::1) are allowed. */
  allowLoopback: boolean
}

export type AddressClass = 'public' | 'loopback' | 'blocked'

// Special-purpose IPv4 ranges (IANA registry) that a callback may never reach.
const BLOCKED_IPV4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
]

// IPv6 ranges blocked outright. IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96, the
// SIIT form) and NAT64 (64:ff9b::/96) addresses are judged by the IPv4 address they carry, before
// these are consulted; IPv4-compatible ones (::a.b.c.d) fall in ::/96 and are refused whatever
// they carry.
const BLOCKED_IPV6: readonly (readonly [string, number])[] = [
  ['::', 96], // unspecified and the deprecated IPv4-compatible form (::127.0.0.1)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: carries an arbitrary IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
]

const blockedIpv4 = new net.BlockList()
for (const [address, prefix] of BLOCKED_IPV4) blockedIpv4.addSubnet(address, prefix, 'ipv4')
const blockedIpv6 = new net.BlockList()
for (const [address, prefix] of BLOCKED_IPV6) blockedIpv6.addSubnet(address, prefix, 'ipv6')

/** Classifies one IP address literal (dotted IPv4 or IPv6, without brackets). */
export function classifyAddress(address: string): AddressClass {
  const family = net.isIP(address)
  if (family === 4) return classifyIpv4(address)
  if (family === 6) return classifyIpv6(address)
  return 'blocked' // not an address at all: never connect to it
}

function classifyIpv4(address: string): AddressClass {
  if (address.startsWith('127.')) return 'loopback'
  return blockedIpv4.check(address, 'ipv4') ? 'blocked' : 'public'
}

function classifyIpv6(address: string): AddressClass {
  const groups = expandIpv6(address)
  if (groups === undefined) return 'blocked'
  const isLoopback = groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1
  if (isLoopback) return 'loopback'
  const embedded = embeddedIpv4(groups)
  if (embedded !== undefined) return classifyIpv4(embedded)
  return blockedIpv6.check(address, 'ipv6') ? 'blocked' : 'public'
}

/**
 * The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d) or
 * NAT64 (64:ff9b::a.b.c.d) address: each reaches that IPv4 host through a dual stack or a
 * translator, so each is judged as it.
 */
function embeddedIpv4(groups: number[]): string | undefined {
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff
  const translated = groups.slice(0, 4).every((g) => g === 0) && groups[4] === 0xffff && groups[5] === 0
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)
  if (!mapped && !translated && !nat64) return undefined
  const high = groups[6]!
  const low = groups[7]!
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function expandIpv6(address: string): number[] | undefined {
  let text = address.split('%')[0]!.toLowerCase() // a zone id (fe80::1%eth0) does not change the class
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number)
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const head = halves[0] ? halves[0].split(':') : []
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) =>
    parseInt(g, 16),
  )
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}

function allowed(address: string, policy: CallbackPolicy): boolean {
  const kind = classifyAddress(address)
  return kind === 'public' || (kind === 'loopback' && policy.allowLoopback)
}

export type UrlCheck = { ok: true } | { ok: false; reason: string }

export interface CheckOptions {
  /** Whether a name that does not resolve passes (when set: it is checked again at delivery). */
  allowUnresolved?: boolean
  resolve?: (hostname: string) => Promise<LookupAddress[]>
}

/**
 * Checks a callback URL against the policy: scheme, no credentials, and every address its host
 * names or resolves to. The URL parser already turns decimal, octal and hex IPv4 spellings
 * (http://2130706433/, http://0177.0.0.1/) into dotted form, so they are judged as what they are.
 */
export async function checkCallbackUrl(
  rawUrl: string,
  policy: CallbackPolicy,
  options: CheckOptions = {},
): Promise<UrlCheck> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    return { ok: false, reason: 'is not a valid URL' }
  }
  if (url.protocol !== 'https:' && (policy.requireHttps || url.protocol !== 'http:')) {
    return { ok: false, reason: policy.requireHttps ? 'must use https' : 'must use http or https' }
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isLoopbackName(host)) {
    return policy.allowLoopback ? { ok: true } : { ok: false, reason: `host ${host} names a loopback address` }
  }
  if (net.isIP(host)) {
    return allowed(host, policy) ? { ok: true } : { ok: false, reason: `points to a ${describe(host)} address` }
  }
  let addresses: LookupAddress[]
  try {
    addresses = await (options.resolve ?? resolveAll)(host)
  } catch {
    return options.allowUnresolved ? { ok: true } : { ok: false, reason: `host ${host} does not resolve` }
  }
  const refused = addresses.find((a) => !allowed(a.address, policy))
  return refused
    ? { ok: false, reason: `host ${host} resolves to a ${describe(refused.address)} address` }
    : { ok: true }
}

/**
 * `localhost` and every name under it are loopback by definition (RFC 6761 §6.3), whatever a
 * resolver says: a resolver that does not know one (`localhost.`, `a.localhost`) would let it pass
 * at registration as an unresolved name. A trailing dot is the same name, written absolute.
 */
function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

function describe(address: string): string {
  return classifyAddress(address) === 'loopback' ? 'loopback' : 'private or reserved'
}

const RESOLVE_TIMEOUT_MS = 3_000

async function resolveAll(hostname: string): Promise<LookupAddress[]> {
  const lookup = dns.lookup(hostname, { all: true, verbatim: true })
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('DNS timeout')), RESOLVE_TIMEOUT_MS).unref(),
  )
  return Promise.race([lookup, timeout])
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for net/tls connect: resolves the name and refuses the connection unless every
 * address is allowed, then connects to those same addresses. Used by the delivery agent so that
 * the address connected to is the address checked.
 */
export function guardedLookup(policy: CallbackPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (addresses) => {
        const refused = addresses.find((a) => !allowed(a.address, policy))
        if (refused || addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(
            `callback host ${hostname} resolves to a ${refused ? describe(refused.address) : 'missing'} address`,
          )
          error.code = 'ERAILBLOCKED'
          callback(error, '')
          return
        }
        if (options.all) callback(null, addresses)
        else callback(null, addresses[0]!.address, addresses[0]!.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    )
  }
}
