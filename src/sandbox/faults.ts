// Fault injection: the sandbox bank misbehaves on purpose, at rates a test sets, so that Rail's
// handling of silence, errors and lost answers is exercised over real HTTP. Off by default.
import type { Queryable } from '../platform/db.ts'

export interface Faults {
  /** Share of requests dropped without an answer (the connection is closed). */
  noAnswerRate: number
  /** Share of requests answered 500 before anything is done. */
  errorRate: number
  /** Share of requests processed in full whose answer is then lost (the connection is closed). */
  lostResponseRate: number
  /** Delay before every answer. */
  delayMs: number
}

export async function readFaults(db: Queryable): Promise<Faults> {
  const result = await db.query<{
    no_answer_rate: string
    error_rate: string
    lost_response_rate: string
    delay_ms: number
  }>(`SELECT no_answer_rate, error_rate, lost_response_rate, delay_ms FROM sandbox_bank.faults WHERE id = 1`)
  const row = result.rows[0]!
  return {
    noAnswerRate: Number(row.no_answer_rate),
    errorRate: Number(row.error_rate),
    lostResponseRate: Number(row.lost_response_rate),
    delayMs: row.delay_ms,
  }
}

export async function writeFaults(db: Queryable, faults: Faults): Promise<Faults> {
  await db.query(
    `UPDATE sandbox_bank.faults SET no_answer_rate = $1, error_rate = $2, lost_response_rate = $3, delay_ms = $4, updated_at = now() WHERE id = 1`,
    [faults.noAnswerRate, faults.errorRate, faults.lostResponseRate, faults.delayMs],
  )
  return readFaults(db)
}

/** What to do with one request, drawn from the rates. */
export type FaultDecision = 'none' | 'no_answer' | 'error' | 'lose_response'

export function decideFault(faults: Faults, random: () => number = Math.random): FaultDecision {
  if (random() < faults.noAnswerRate) return 'no_answer'
  if (random() < faults.errorRate) return 'error'
  if (random() < faults.lostResponseRate) return 'lose_response'
  return 'none'
}
