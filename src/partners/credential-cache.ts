// Remembers authenticated credentials in the API process, so that a signed request costs no
// database round trip (on the submit path the look-up was the one statement paid per request).
//
// Correctness over speed: an entry is trusted only while this process listens on the
// 'rail_credentials_changed' channel, which a trigger notifies on every committed change to a
// partner or its credentials (revocation, rotation, expiry set, callback URL; migration 0020),
// whoever makes it — API, CLI or an operator's SQL. A notice forgets every entry. While the
// listener is down (not yet connected, or its connection lost) nothing is remembered and every
// request reads the database, as without a cache. An entry also lapses at the credential's own
// expiry and after `ttlMs` at most. A look-up that raced a notice is not stored, so an answer read
// before a revocation committed cannot outlive it. Unknown keys are never remembered: a prober
// cannot fill the cache.
import type pg from 'pg'
import { systemClock, type Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'

export const CREDENTIALS_CHANNEL = 'rail_credentials_changed'
const RECONNECT_DELAY_MS = 1_000

/** The caches of this process that are started, for forgetCredentialsInThisProcess. */
const startedCaches = new Set<{ forget(): void }>()

/**
 * Makes every cache of this process forget what it remembers, at once: a change made by this
 * process (a rotation or revocation through the service) holds for its very next request, without
 * waiting for the notice that tells the other processes. Called after the change commits; the
 * notice follows anyway.
 */
export function forgetCredentialsInThisProcess(): void {
  for (const cache of startedCaches) cache.forget()
}

export interface CredentialCacheOptions {
  /** Longest an entry is trusted without a fresh read, notices or not. */
  ttlMs: number
  /** Entries at most; the oldest is forgotten first. */
  entriesMax: number
  /** Entries lapse by it (at ttlMs, and at the credential's expiry). */
  clock: Clock
}

interface Entry<T> {
  value: T
  validUntilMs: number
}

export class CredentialCache<T extends { expiresAt: Date | null }> {
  readonly #pool: Pool
  readonly #options: CredentialCacheOptions
  readonly #entries = new Map<string, Entry<T>>()
  #listener: pg.PoolClient | undefined
  #listening = false
  #stopped = false
  /** Bumped by every notice and every loss of the listener: a look-up that spans one is not stored. */
  #generation = 0
  #reconnect: NodeJS.Timeout | undefined

  constructor(pool: Pool, options: Partial<CredentialCacheOptions> = {}) {
    this.#pool = pool
    this.#options = { ttlMs: 60_000, entriesMax: 10_000, clock: systemClock, ...options }
  }

  /** Starts listening; until it does, look-ups go to the database. Never throws: a failure retries. */
  start(): void {
    startedCaches.add(this)
    void this.#listen()
  }

  stop(): void {
    this.#stopped = true
    startedCaches.delete(this)
    clearTimeout(this.#reconnect)
    this.forget()
    const listener = this.#listener
    this.#listener = undefined
    this.#listening = false
    // Closed, not returned to the pool: the connection carries this cache's listeners.
    listener?.release(true)
  }

  /** The value under `key`: remembered, or read by `load` (and remembered if it is a live credential). */
  async get(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const nowMs = this.#options.clock.now().getTime()
    const entry = this.#entries.get(key)
    if (entry && this.#listening && nowMs < entry.validUntilMs) return entry.value
    if (entry) this.#entries.delete(key)
    const generation = this.#generation
    const value = await load()
    if (value && this.#listening && generation === this.#generation) this.#remember(key, value)
    return value
  }

  get size(): number {
    return this.#entries.size
  }

  #remember(key: string, value: T): void {
    const validUntilMs = Math.min(
      this.#options.clock.now().getTime() + this.#options.ttlMs,
      value.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY,
    )
    if (this.#entries.size >= this.#options.entriesMax) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, { value, validUntilMs })
  }

  /** Forgets every entry; a look-up under way is not stored either. */
  forget(): void {
    this.#generation++
    this.#entries.clear()
  }

  async #listen(): Promise<void> {
    if (this.#stopped) return
    let listener: pg.PoolClient | undefined
    try {
      listener = await this.#pool.connect()
      listener.on('notification', (notice) => {
        if (notice.channel === CREDENTIALS_CHANNEL) this.forget()
      })
      listener.on('error', () => this.#lost(listener!))
      listener.on('end', () => this.#lost(listener!))
      await listener.query(`LISTEN ${CREDENTIALS_CHANNEL}`)
      if (this.#stopped) {
        listener.release(true)
        return
      }
      this.#listener = listener
      this.forget() // anything read before the listener was up is not trusted
      this.#listening = true
    } catch {
      listener?.release(true)
      this.#scheduleReconnect()
    }
  }

  #lost(listener: pg.PoolClient): void {
    if (this.#listener !== listener) return
    this.#listening = false
    this.#listener = undefined
    this.forget()
    listener.release(true)
    this.#scheduleReconnect()
  }

  #scheduleReconnect(): void {
    if (this.#stopped) return
    clearTimeout(this.#reconnect)
    this.#reconnect = setTimeout(() => void this.#listen(), RECONNECT_DELAY_MS)
    this.#reconnect.unref()
  }
}
