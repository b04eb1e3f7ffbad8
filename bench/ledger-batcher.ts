// Benchmark only: bench/ledger.ts compares it with the product's own write paths; nothing in src/ uses it.
// Coalesces concurrent ledger requests into one database transaction: the transfers of all the
// waiting callers go into one ledger_create_transfers() call (each linked request a chain of its
// own), and one commit serves them all. Each caller gets exactly its own
// results, after the commit. This is TigerBeetle's batching applied to PostgreSQL: the cost of a
// round trip, a statement and a commit is paid per batch instead of per transfer.
import type { Pool } from '../src/platform/db.ts'
import { applyTransfers, chainFlags, TRANSFERS_PER_CALL_MAX } from '../src/ledger/service.ts'
import type { TransferInput, TransferResult } from '../src/ledger/types.ts'

export interface LedgerBatcherOptions {
  /** Transfers in one batch at most (bounds lock hold time and the statement's size). */
  transfersMax: number
  /** Batches in flight at once, each in its own transaction. */
  lanes: number
}

interface Submission {
  transfers: readonly TransferInput[]
  linked: boolean
  resolve: (results: TransferResult[]) => void
  reject: (error: unknown) => void
}

export class LedgerBatcher {
  readonly #pool: Pool
  readonly #options: LedgerBatcherOptions
  #queue: Submission[] = []
  #lanesBusy = 0

  constructor(pool: Pool, options: Partial<LedgerBatcherOptions> = {}) {
    this.#pool = pool
    this.#options = { transfersMax: 4_096, lanes: 1, ...options }
    if (this.#options.transfersMax > TRANSFERS_PER_CALL_MAX)
      throw new Error(`transfersMax is at most ${TRANSFERS_PER_CALL_MAX}`)
  }

  createTransfers(transfers: readonly TransferInput[], options: { linked?: boolean } = {}): Promise<TransferResult[]> {
    if (transfers.length > this.#options.transfersMax)
      return Promise.reject(new Error(`at most ${this.#options.transfersMax} transfers per request`))
    return new Promise((resolve, reject) => {
      this.#queue.push({ transfers, linked: options.linked ?? false, resolve, reject })
      this.#pump()
    })
  }

  #pump(): void {
    while (this.#lanesBusy < this.#options.lanes && this.#queue.length > 0) {
      const batch: Submission[] = []
      let size = 0
      while (this.#queue.length > 0 && size + this.#queue[0]!.transfers.length <= this.#options.transfersMax) {
        const next = this.#queue.shift()!
        size += next.transfers.length
        batch.push(next)
      }
      this.#lanesBusy++
      void this.#execute(batch).finally(() => {
        this.#lanesBusy--
        this.#pump()
      })
    }
  }

  async #execute(batch: Submission[]): Promise<void> {
    // One call for the whole batch: each submission is its own chain (or its own unlinked
    // transfers), so the accounts of the batch are locked once, in order — no deadlocks.
    const transfers = batch.flatMap((submission) => submission.transfers)
    const linkedWithNext = batch.flatMap((submission) => chainFlags(submission.transfers.length, submission.linked))
    try {
      // One statement is its own transaction: one round trip does the work and the commit. It
      // cannot deadlock (all its locks are taken at once, in order), so it needs no retry.
      const results = await applyTransfers(this.#pool, transfers, linkedWithNext)
      let offset = 0
      for (const submission of batch) {
        submission.resolve(results.slice(offset, offset + submission.transfers.length))
        offset += submission.transfers.length
      }
    } catch (error) {
      for (const submission of batch) submission.reject(error)
    }
  }
}
