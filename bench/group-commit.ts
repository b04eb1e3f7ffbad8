// Benchmark only: bench/ledger.ts compares it with the product's own write paths; nothing in src/ uses it.
// Group commit: many concurrent business operations share one database transaction and one
// commit (TigerBeetle's lesson: amortise the commit, not the logic). Each operation still runs
// its whole write path — domain rows, ledger transfers, events, jobs — on the shared connection,
// inside its own savepoint, so one caller's failure fails no other and each caller gets its own
// result. Nothing is answered before the commit.
//
// Operations must be safe to run again: a lock conflict (deadlock or serialization failure) in
// one operation rolls back its savepoint and defers it to the next batch. If the commit itself
// fails, every operation of the batch is rejected; since every move in Rail is idempotent on its
// reference, the callers' retries are safe even when a lost connection leaves the outcome unknown.
import { isLockConflict, type Pool, type Tx } from '../src/platform/db.ts'

export interface GroupCommitOptions {
  /** Operations in one transaction at most: bounds lock hold time and a failed batch's blast radius. */
  batchMax: number
  /** Batches in flight at once, each on its own connection. */
  lanes: number
  /** Times one operation may be deferred after a lock conflict before its error is returned. */
  deferralsMax: number
}

export const GROUP_COMMIT_DEFAULTS: GroupCommitOptions = { batchMax: 256, lanes: 2, deferralsMax: 10 }

interface Queued {
  work: (tx: Tx) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  deferrals: number
}

type Settled = { op: Queued; ok: true; value: unknown } | { op: Queued; ok: false; error: unknown }

export class GroupCommitter {
  readonly #pool: Pool
  readonly #options: GroupCommitOptions
  #queue: Queued[] = []
  #lanesBusy = 0
  #closed = false

  constructor(pool: Pool, options: Partial<GroupCommitOptions> = {}) {
    this.#pool = pool
    this.#options = { ...GROUP_COMMIT_DEFAULTS, ...options }
    if (this.#options.batchMax < 1 || this.#options.lanes < 1)
      throw new Error('group commit needs batchMax ≥ 1 and lanes ≥ 1')
  }

  /** Runs `work` in a shared transaction; resolves with its result once that transaction commits. */
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('group committer is closed'))
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject, deferrals: 0 })
      this.#pump()
    })
  }

  /** Refuses new work and waits for queued work to finish. */
  async close(): Promise<void> {
    this.#closed = true
    while (this.#queue.length > 0 || this.#lanesBusy > 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  #pump(): void {
    while (this.#lanesBusy < this.#options.lanes && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#options.batchMax)
      this.#lanesBusy++
      void this.#execute(batch).finally(() => {
        this.#lanesBusy--
        this.#pump()
      })
    }
  }

  async #execute(batch: Queued[]): Promise<void> {
    let client: Tx
    try {
      client = await this.#pool.connect()
    } catch (error) {
      for (const op of batch) op.reject(error)
      return
    }
    let settled: Settled[] = []
    const deferred: Queued[] = []
    try {
      await client.query('BEGIN; SAVEPOINT op')
      for (const [index, op] of batch.entries()) {
        // One round trip closes the previous operation's savepoint and opens this one's.
        if (index > 0) await client.query('RELEASE SAVEPOINT op; SAVEPOINT op')
        try {
          settled.push({ op, ok: true, value: await op.work(client) })
        } catch (error) {
          await client.query('ROLLBACK TO SAVEPOINT op')
          if (isLockConflict(error) && op.deferrals < this.#options.deferralsMax) {
            op.deferrals++
            deferred.push(op)
          } else {
            settled.push({ op, ok: false, error })
          }
        }
      }
      await client.query('COMMIT')
    } catch (error) {
      // The transaction failed as a whole: nothing of it committed (or, if the connection was
      // lost during COMMIT, nobody knows). Every caller hears of it.
      await client.query('ROLLBACK').catch(() => {})
      settled = batch.map((op) => ({ op, ok: false, error }))
      deferred.length = 0
    } finally {
      client.release()
    }
    for (const outcome of settled) {
      if (outcome.ok) outcome.op.resolve(outcome.value)
      else outcome.op.reject(outcome.error)
    }
    // Deferred operations go first in the next batch, after this one's locks are released.
    this.#queue.unshift(...deferred)
  }
}
