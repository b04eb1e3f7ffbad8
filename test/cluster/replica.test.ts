// `rail cluster --api 2` on a real primary with DATABASE_READ_URL naming a real streaming replica
// of it (pg_basebackup, replica-pair.ts). Lists, statements and event reads are served by the
// replica; a wallet created through one API process is in the list read next, whichever process
// reads it; with the replica's replay paused (stale) or the replica stopped, reads still answer
// with every write, from the primary. Skipped, saying why, where Debian's PostgreSQL 15 binaries
// are not installed.
import { randomBytes, randomUUID } from 'node:crypto'
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { RailClient } from '../../src/client/index.ts'
import { createPartner } from '../../src/partners/service.ts'
import { createPool, type Pool } from '../../src/platform/db.ts'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { waitFor } from '../support/wait.ts'
import { startCluster, type RunningCluster } from './load.ts'
import { replicaPairUnavailable, startReplicaPair, type ReplicaPair } from './replica-pair.ts'

const unavailable = replicaPairUnavailable()
if (unavailable) console.log(`read replica test skipped: ${unavailable}`)

const DATABASE = 'rail'
/** Writes then reads, in each part. */
const ROUNDS = 20
const STALE_ROUNDS = 5
const STATEMENTS = 5
/** Long enough for the replica to replay a create on a busy machine; a paused one never catches up, whatever the wait. */
const MAX_WAIT_MS = 1_000
const masterKey = randomBytes(32)
let pair: ReplicaPair | undefined
let cluster: RunningCluster | undefined
let primaryPool: Pool | undefined
let client: RailClient
let keptAlive: Dispatcher | undefined

beforeAll(async () => {
  if (unavailable) return
  // A connection per request: Node's cluster hands each to the next API process in turn, so a
  // create and the list right after it are served by different processes.
  keptAlive = getGlobalDispatcher()
  setGlobalDispatcher(new Agent({ pipelining: 0 }))
  const beganAt = Date.now()
  pair = await startReplicaPair()
  await pair.primary.query('postgres', `CREATE DATABASE ${DATABASE}`)
  const pairMs = Date.now() - beganAt
  cluster = await startCluster(
    { api: 2, worker: 0 },
    {
      ...process.env,
      DATABASE_URL: pair.primary.url(DATABASE),
      DATABASE_READ_URL: pair.replica.url(DATABASE),
      RAIL_READ_REPLICA_MAX_WAIT_MS: String(MAX_WAIT_MS),
      RAIL_MASTER_KEY: masterKey.toString('hex'),
      SANDBOX_BANK_SECRET: 'replica-test-secret',
      PORT: String(await findFreePort()),
      LOG_LEVEL: 'warn',
      DATABASE_POOL_MAX: '4',
      RAIL_RATE_LIMIT_RPS: '0',
      RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS: '0',
    },
  )
  console.log(
    `read replica: primary and replica streaming in ${pairMs} ms, the cluster running ${Date.now() - beganAt - pairMs} ms later`,
  )
  primaryPool = createPool(pair.primary.url(DATABASE), 2)
  const credentials = await createPartner(primaryPool, masterKey, {
    name: 'Replica Partner',
    customerClass: 'fintech',
    environment: 'sandbox',
  })
  client = new RailClient(cluster.url, credentials)
}, 180_000)

afterAll(async () => {
  if (keptAlive) setGlobalDispatcher(keptAlive)
  await cluster?.stop()
  await primaryPool?.end()
  await pair?.stop()
})

it.skipIf(unavailable)(
  'lists, statements and events are read on the replica, and a list right after a create shows it, whichever process reads',
  { timeout: 90_000 },
  async () => {
    const before = { wallets: await scans('replica', 'wallets'), events: await scans('replica', 'events') }
    let walletId = ''
    for (let round = 0; round < ROUNDS; round++) {
      const reference = `ryw-${randomUUID()}`
      walletId = await createWallet(reference)
      expect(await listed(reference)).toBe(walletId)
    }
    // A wallet's statement reads the wallet, then its lines; the event list reads the events.
    for (let round = 0; round < STATEMENTS; round++) {
      expect((await client.get(`/wallet/statement?customerId=${walletId}`)).status).toBe(200)
      expect((await client.get('/api/v1/rail/events')).status).toBe(200)
    }
    expect((await client.get('/api/v1/rail/balances')).status).toBe(200)
    // Table statistics are per server: the replica counts the scans of the reads it served.
    await waitFor(
      async () => (await scans('replica', 'wallets')) - before.wallets >= ROUNDS + STATEMENTS,
      30_000,
      `${ROUNDS + STATEMENTS} wallet scans on the replica`,
    )
    await waitFor(
      async () => (await scans('replica', 'events')) - before.events >= STATEMENTS,
      30_000,
      `${STATEMENTS} event scans on the replica`,
    )
    console.log(
      `read replica: ${ROUNDS} creates each listed at once, ${STATEMENTS} statements and event lists; on the replica, wallet scans +${(await scans('replica', 'wallets')) - before.wallets}, event scans +${(await scans('replica', 'events')) - before.events}`,
    )
    // Consecutive scrapes reach the processes in turn: each has served reads from the replica.
    for (let scrape = 0; scrape < 4; scrape++) expect(await readsCountedNow('replica', 'caught_up')).toBe(true)
  },
)

it.skipIf(unavailable)(
  'with the replica paused, reads answer from the primary after the bound, and see every write',
  { timeout: 90_000 },
  async () => {
    const { replica } = pair!
    await replica.query(DATABASE, 'SELECT pg_wal_replay_pause()')
    try {
      await waitFor(
        async () =>
          (await replica.query<{ state: string }>(DATABASE, 'SELECT pg_get_wal_replay_pause_state() AS state'))[0]!
            .state === 'paused',
        10_000,
        'replay paused',
      )
      for (let round = 0; round < STALE_ROUNDS; round++) {
        const reference = `stale-${randomUUID()}`
        const walletId = await createWallet(reference)
        // The replica has not got it, and will not until replay resumes; the API's list has.
        expect(await replica.query(DATABASE, 'SELECT 1 FROM wallets WHERE id = $1', [walletId])).toHaveLength(0)
        expect(await listed(reference)).toBe(walletId)
      }
      expect(await readsCounted('primary', 'lagging')).toBe(true)
    } finally {
      await replica.query(DATABASE, 'SELECT pg_wal_replay_resume()')
    }
  },
)

it.skipIf(unavailable)(
  'with the replica stopped, reads answer from the primary; started again, it serves them again',
  { timeout: 90_000 },
  async () => {
    const { replica } = pair!
    await replica.stop()
    for (let round = 0; round < STALE_ROUNDS; round++) expect(await createThenFind()).toBe(true)
    expect(await readsCounted('primary', 'unavailable')).toBe(true)
    await replica.start()
    const scansBefore = await scans('replica', 'wallets')
    await waitFor(
      async () => {
        expect(await createThenFind()).toBe(true)
        return (await scans('replica', 'wallets')) > scansBefore
      },
      30_000,
      'a wallet list scan on the restarted replica',
    )
  },
)

/** Creates a wallet, then finds it in the first page of the list: true when it is there. */
async function createThenFind(): Promise<boolean> {
  const reference = `ryw-${randomUUID()}`
  const walletId = await createWallet(reference)
  return (await listed(reference)) === walletId
}

async function createWallet(customerReference: string): Promise<string> {
  const created = await client.post<{ walletId: string }>('/wallet', { customerReference, name: 'Reader' })
  expect(created.status).toBe(201)
  return created.body.walletId
}

/** The id of the wallet the list shows for `customerReference`, if any. */
async function listed(customerReference: string): Promise<string | undefined> {
  const page = await client.get<{ data: { walletId: string }[] }>(
    `/wallet?customerReference=${encodeURIComponent(customerReference)}`,
  )
  expect(page.status).toBe(200)
  return page.body.data[0]?.walletId
}

/** Index and sequential scans of a table counted by one server. */
async function scans(server: 'primary' | 'replica', table: string): Promise<number> {
  const rows = await pair![server].query<{ scans: number }>(
    DATABASE,
    `SELECT (coalesce(idx_scan, 0) + coalesce(seq_scan, 0))::int AS scans FROM pg_stat_user_tables WHERE relname = $1`,
    [table],
  )
  return rows[0]!.scans
}

/** Some API process's /metrics counts reads served by `servedBy` for `reason` (the port reaches each process in turn). */
async function readsCounted(servedBy: 'replica' | 'primary', reason: string): Promise<boolean> {
  for (let scrape = 0; scrape < 6; scrape++) if (await readsCountedNow(servedBy, reason)) return true
  return false
}

/** The API process this scrape reaches counts reads served by `servedBy` for `reason`. */
async function readsCountedNow(servedBy: 'replica' | 'primary', reason: string): Promise<boolean> {
  const metrics = await fetch(`${cluster!.url}/metrics`)
  return new RegExp(`^rail_read_replica_reads_total\\{served_by="${servedBy}",reason="${reason}"\\} [1-9]`, 'm').test(
    await metrics.text(),
  )
}
