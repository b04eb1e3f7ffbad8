// Coalesces concurrent submits into one transaction (as the ledger's LedgerBatcher coalesces
// transfers): the checked submits waiting when a lane frees up are recorded together by
// recordSubmissions — one insert, one ledger call, one commit for all of them — and each caller
// gets its own transfer after the commit. If a batch fails, each of its submits is recorded alone,
// so one bad submit fails no other.
import { withTransaction, type Pool, type Tx } from '../platform/db.ts'
import type * as repo from './repo.ts'

export interface SubmitBatcherOptions {
  /** Submits in one batch at most. */
  batchMax: number
  /** Batches in flight at once, each in its own transaction. */
  lanes: number
}

export type RecordBatch<S> = (tx: Tx, submissions: readonly S[]) => Promise<(repo.OutboundTransfer | undefined)[]>

interface Waiting<S> {
  submission: S
  resolve: (transfer: repo.OutboundTransfer | undefined) => void
  reject: (error: unknown) => void
}

export class SubmitBatcher<S> {
  readonly #pool: Pool
  readonly #record: RecordBatch<S>
  readonly #options: SubmitBatcherOptions
  #queue: Waiting<S>[] = []
  #lanesBusy = 0

  constructor(pool: Pool, record: RecordBatch<S>, options: Partial<SubmitBatcherOptions> = {}) {
    this.#pool = pool
    this.#record = record
    this.#options = { batchMax: 256, lanes: 2, ...options }
  }

  /** The recorded transfer, or undefined when its reference was taken (the caller replays it). */
  submit(submission: S): Promise<repo.OutboundTransfer | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ submission, resolve, reject })
      this.#pump()
    })
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

  async #execute(batch: Waiting<S>[]): Promise<void> {
    try {
      const transfers = await withTransaction(this.#pool, (tx) => this.#record(tx, batch.map((waiting) => waiting.submission)))
      batch.forEach((waiting, index) => waiting.resolve(transfers[index]))
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error)
        return
      }
      // Something in the batch failed it, and every change rolled back: each submit on its own.
      await Promise.all(batch.map((waiting) => this.#alone(waiting)))
    }
  }

  async #alone(waiting: Waiting<S>): Promise<void> {
    try {
      const [transfer] = await withTransaction(this.#pool, (tx) => this.#record(tx, [waiting.submission]))
      waiting.resolve(transfer)
    } catch (error) {
      waiting.reject(error)
    }
  }
}
