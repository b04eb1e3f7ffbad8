// Coalesces concurrent business operations of one kind into one database transaction (as the
// benchmark's LedgerBatcher, bench/ledger-batcher.ts, coalesces transfers): the operations waiting when a lane frees up are
// written together by the kind's set-based `write` — a handful of statements and one commit for
// all of them, whatever their number — and each caller gets its own result after the commit.
//
// If a batch fails, every change of it rolled back, and its operations are written again one by
// one in a shared transaction, each in its own savepoint: one bad operation fails no other, its
// caller gets its own error, and the others still share one commit. Where operations contend for a hot row (a partner's float account, the provider's
// settlement account), a batch takes that row's lock once for all of them instead of once per
// operation, commit after commit.
//
// A caller that is a request has its wait for a batch (coalescer_wait) and its batch's transaction
// until its own result (transaction) among its stages (observability/stages.ts); the batch itself
// runs as no request's, so that its connection's wait is not taken for the pool_wait of whichever
// request happened to start it.
import { isLockConflict, withTransaction, type Pool, type Tx } from './db.ts'
import { currentStages, outsideRequests, type RequestStages } from './observability/stages.ts'

export interface CoalescerOptions {
  /** Operations in one batch at most: bounds lock hold time and a failed batch's blast radius. */
  batchMax: number
  /** Batches in flight at once, each in its own transaction on its own connection. */
  lanes: number
}

/** Writes many operations in the caller's transaction; answers one result per input, in order. */
export type WriteBatch<I, O> = (tx: Tx, inputs: readonly I[]) => Promise<O[]>

interface Waiting<I, O> {
  input: I
  resolve: (output: O) => void
  reject: (error: unknown) => void
  /** When its batch's transaction began (performance.now()): the end of its wait. */
  batchStartedMs: number
}

type Settled<I, O> =
  { waiting: Waiting<I, O>; ok: true; output: O } | { waiting: Waiting<I, O>; ok: false; error: unknown }

export class Coalescer<I, O> {
  readonly #pool: Pool
  readonly #write: WriteBatch<I, O>
  readonly #options: CoalescerOptions
  #queue: Waiting<I, O>[] = []
  #lanesBusy = 0

  constructor(pool: Pool, write: WriteBatch<I, O>, options: Partial<CoalescerOptions> = {}) {
    this.#pool = pool
    this.#write = write
    this.#options = { batchMax: 256, lanes: 2, ...options }
    if (this.#options.batchMax < 1 || this.#options.lanes < 1)
      throw new Error('a coalescer needs batchMax ≥ 1 and lanes ≥ 1')
  }

  /** Resolves with this operation's result once the transaction that wrote it has committed. */
  run(input: I): Promise<O> {
    const stages = currentStages()
    return new Promise((resolve, reject) => {
      const waiting: Waiting<I, O> = { input, resolve, reject, batchStartedMs: 0 }
      if (stages) timeWaiting(waiting, stages)
      this.#queue.push(waiting)
      this.#pump()
    })
  }

  #pump(): void {
    while (this.#lanesBusy < this.#options.lanes && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#options.batchMax)
      this.#lanesBusy++
      void outsideRequests(() => this.#execute(batch)).finally(() => {
        this.#lanesBusy--
        this.#pump()
      })
    }
  }

  async #execute(batch: Waiting<I, O>[]): Promise<void> {
    const startedMs = performance.now()
    for (const waiting of batch) waiting.batchStartedMs = startedMs
    try {
      const outputs = await withTransaction(this.#pool, (tx) =>
        this.#writeChecked(
          tx,
          batch.map((waiting) => waiting.input),
        ),
      )
      batch.forEach((waiting, index) => waiting.resolve(outputs[index]!))
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error)
        return
      }
      // Something in the batch failed it, and every change rolled back: each operation on its own.
      await this.#oneByOne(batch)
    }
  }

  async #oneByOne(batch: Waiting<I, O>[]): Promise<void> {
    let settled: Settled<I, O>[]
    try {
      settled = await withTransaction(this.#pool, async (tx) => {
        const outcomes: Settled<I, O>[] = []
        for (const waiting of batch) {
          await tx.query('SAVEPOINT operation')
          try {
            const [output] = await this.#writeChecked(tx, [waiting.input])
            await tx.query('RELEASE SAVEPOINT operation')
            outcomes.push({ waiting, ok: true, output: output! })
          } catch (error) {
            // A lock conflict is no fault of this operation: the whole transaction runs again.
            if (isLockConflict(error)) throw error
            await tx.query('ROLLBACK TO SAVEPOINT operation')
            outcomes.push({ waiting, ok: false, error })
          }
        }
        return outcomes
      })
    } catch (error) {
      // The shared transaction itself failed (or, if the connection was lost at COMMIT, nobody knows).
      for (const waiting of batch) waiting.reject(error)
      return
    }
    for (const outcome of settled) {
      if (outcome.ok) outcome.waiting.resolve(outcome.output)
      else outcome.waiting.reject(outcome.error)
    }
  }

  /** A write that answers a result per input, checked before its transaction commits. */
  async #writeChecked(tx: Tx, inputs: I[]): Promise<O[]> {
    const outputs = await this.#write(tx, inputs)
    if (outputs.length !== inputs.length)
      throw new Error(`a batch write answered ${outputs.length} results for ${inputs.length} operations`)
    return outputs
  }
}

/** Counts a request's wait for its batch and the batch's transaction, up to its own result, as its stages. */
function timeWaiting<I, O>(waiting: Waiting<I, O>, stages: RequestStages): void {
  const counted = stages.open()
  const queuedMs = performance.now()
  const { resolve, reject } = waiting
  const settled = () => {
    if (counted) stages.add('coalescer_wait', queuedMs, waiting.batchStartedMs)
    stages.close('transaction', counted, waiting.batchStartedMs)
  }
  waiting.resolve = (output) => {
    settled()
    resolve(output)
  }
  waiting.reject = (error) => {
    settled()
    reject(error)
  }
}
