// The API's credential cache: trusted only while it listens for changes, forgets everything on a
// committed change to partners or credentials (whoever makes it), never outlives a credential's
// expiry, never stores a look-up that raced a change, and falls back to the database when its
// listener is lost. End to end: a revoked key is refused at once although it was just used.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CredentialCache } from '../../src/partners/credential-cache.ts'
import { revokeSigningKey } from '../../src/partners/service.ts'
import { testClock } from '../support/clock.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'

let app: TestApp
beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => app?.close())

interface Value {
  name: string
  expiresAt: Date | null
}

function counted(value: Value | undefined) {
  const load = async () => {
    load.calls++
    return value
  }
  load.calls = 0
  return load
}

async function listening(cache: CredentialCache<Value>): Promise<void> {
  const probe = counted({ name: 'probe', expiresAt: null })
  await waitFor(
    async () => {
      await cache.get('probe', probe)
      return cache.size > 0
    },
    5_000,
    'the cache to listen',
  )
}

it('remembers a live credential while listening, and forgets everything when a partner or credential changes', async () => {
  const cache = new CredentialCache<Value>(app.db.pool)
  const load = counted({ name: 'a', expiresAt: null })
  expect(await cache.get('a', load)).toEqual({ name: 'a', expiresAt: null }) // not listening yet: read, not kept
  cache.start()
  await listening(cache)
  await cache.get('a', load)
  await cache.get('a', load)
  await cache.get('a', load)
  expect(load.calls).toBe(2) // once before listening, once to fill

  const { credentials } = await app.newPartner()
  await app.db.pool.query(`UPDATE partners SET updated_at = now() WHERE id = $1`, [credentials.partnerId]) // an operator's SQL
  await waitFor(() => cache.size === 0, 2_000, 'the change notice')
  await cache.get('a', load)
  expect(load.calls).toBe(3)
  cache.stop()
})

it('never remembers an unknown key, and lets an entry lapse at its credential expiry', async () => {
  const clock = testClock()
  const cache = new CredentialCache<Value>(app.db.pool, { clock })
  cache.start()
  await listening(cache)
  const unknown = counted(undefined)
  await cache.get('nobody', unknown)
  await cache.get('nobody', unknown)
  expect(unknown.calls).toBe(2)

  const expiring = counted({ name: 'overlap', expiresAt: new Date(clock.now().getTime() + 150) })
  await cache.get('overlap', expiring)
  await cache.get('overlap', expiring)
  expect(expiring.calls).toBe(1)
  clock.advance(200) // past the credential's expiry
  await cache.get('overlap', expiring)
  expect(expiring.calls).toBe(2)
  cache.stop()
})

it('does not store a look-up that a change notice overtook', async () => {
  const cache = new CredentialCache<Value>(app.db.pool)
  cache.start()
  await listening(cache)
  let calls = 0
  const slowLoad = async () => {
    calls++
    if (calls === 1) {
      // The change commits while this look-up is in flight; the notice empties the cache (the probe goes).
      await app.db.pool.query(`SELECT pg_notify('rail_credentials_changed', 'test')`)
      await waitFor(() => cache.size === 0, 2_000, 'the change notice')
    }
    return { name: 'raced', expiresAt: null }
  }
  await cache.get('raced', slowLoad)
  await cache.get('raced', slowLoad)
  expect(calls).toBe(2)
  cache.stop()
})

it('falls back to the database while its listener is lost, and listens again', async () => {
  const cache = new CredentialCache<Value>(app.db.pool)
  cache.start()
  await listening(cache)
  const load = counted({ name: 'b', expiresAt: null })
  await cache.get('b', load)
  await app.db.pool.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN rail_credentials_changed'`,
  )
  await waitFor(() => cache.size === 0, 2_000, 'the loss to be noticed')
  await cache.get('b', load)
  await cache.get('b', load)
  expect(load.calls).toBe(3) // not trusted while deaf
  await listening(cache)
  await cache.get('b', load)
  await cache.get('b', load)
  expect(load.calls).toBe(4)
  cache.stop()
})

it('a key revoked by this process right after a request that used it is refused on the very next request', async () => {
  const { client, credentials } = await app.newPartner()
  for (let i = 0; i < 3; i++) expect((await client.get('/api/v1/rail/settings')).status).toBe(200)
  expect(await revokeSigningKey(app.db.pool, credentials.keyId)).toBe(true)
  expect((await client.get('/api/v1/rail/settings')).status).toBe(401)
})

it('a key revoked elsewhere (SQL on another connection) is refused once the change notice arrives, within milliseconds', async () => {
  const { client, credentials } = await app.newPartner()
  for (let i = 0; i < 3; i++) expect((await client.get('/api/v1/rail/settings')).status).toBe(200)
  await app.db.pool.query(`UPDATE partner_credentials SET revoked_at = now() WHERE key_id = $1`, [credentials.keyId])
  await waitFor(
    async () => (await client.get('/api/v1/rail/settings')).status === 401,
    2_000,
    'the revoked key to be refused',
  )
})
