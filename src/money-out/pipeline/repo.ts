// SQL of bank instructions.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'
import { addJobsSql, jobSpecSql } from '../../platform/jobs.ts'
import { instructionStates, WORKABLE, type InstructionState } from './states.ts'

export type OwnerType = 'wallet_move' | 'outbound_transfer'
export type Operation = 'credit' | 'debit' | 'book' | 'interbank' | 'payout'

export interface Instruction {
  id: string
  partnerId: string
  ownerType: OwnerType
  provider: string
  operation: Operation
  amountKobo: number
  narration: string | null
  debitAccountNumber: string | null
  creditAccountNumber: string | null
  destinationBankCode: string | null
  destinationAccountNumber: string | null
  nameCheck: boolean
  expectedAccountName: string | null
  verifiedAccountName: string | null
  state: InstructionState
  sendAttempts: number
  lastSentAt: Date | null
  /** The time the latest send is signed with (its commit, by the clock shared with the bank); null before 0047. */
  lastSignedAt: Date | null
  requeryAttempts: number
  requeryFirstDelayMs: number
  deadlineAt: Date
  nextAttemptAt: Date
  leaseToken: string | null
  providerReference: string | null
  responseCode: string | null
  responseMessage: string | null
  failureCode: string | null
  failureMessage: string | null
  resolution: Record<string, unknown> | null
  /** When the bank first answered that it had the payment (in progress or done); null: it never did. */
  acceptedAt: Date | null
  createdAt: Date
  terminalAt: Date | null
}

const COLUMN_NAMES = `id, partner_id, owner_type, provider, operation, amount_kobo, narration, debit_account_number, credit_account_number, destination_bank_code,
  destination_account_number, name_check, expected_account_name, verified_account_name, state, send_attempts, last_sent_at, last_signed_at, requery_attempts, requery_first_delay_ms,
  deadline_at, next_attempt_at, lease_token, provider_reference, response_code, response_message, failure_code, failure_message, resolution, accepted_at, created_at, terminal_at`
const COLUMNS = camelColumns(COLUMN_NAMES)

const { one } = rowReaders((row: Instruction) => row)

/** A new instruction, as its owner describes it with its schedule; `sending` when it is claimed to be sent at once. */
export type NewInstruction = Pick<
  Instruction,
  | 'id'
  | 'partnerId'
  | 'ownerType'
  | 'provider'
  | 'operation'
  | 'amountKobo'
  | 'narration'
  | 'debitAccountNumber'
  | 'creditAccountNumber'
  | 'destinationBankCode'
  | 'destinationAccountNumber'
  | 'nameCheck'
  | 'expectedAccountName'
  | 'requeryFirstDelayMs'
  | 'deadlineAt'
> & {
  /** Set when the creating process works it at once: the instruction is born held by it. */
  lease?: { token: string; expiresAt: Date }
  /** When its creator made it, by the creator's clock: the time of its first send when it is born sending. */
  madeAt: Date
}

/** Born `sending` (attempt 1) when the creating process sends at once with no name enquiry first: the send is committed with the claim. */
function sendsAtOnce(instruction: NewInstruction): boolean {
  return instruction.lease !== undefined && !instruction.nameCheck
}

const INSERT_COLUMNS = `id, partner_id, owner_type, provider, operation, amount_kobo, narration, debit_account_number, credit_account_number, destination_bank_code,
  destination_account_number, name_check, expected_account_name, state, send_attempts, requery_first_delay_ms, deadline_at, lease_token, lease_expires_at, last_sent_at,
  last_signed_at, next_attempt_at`

/**
 * The values of one instruction's row, in INSERT_COLUMNS order. Its first step is due when it is
 * made, by its creator's clock: the clock every later step and sweep judges next_attempt_at by.
 */
function insertValues(instruction: NewInstruction): unknown[] {
  return [
    instruction.id,
    instruction.partnerId,
    instruction.ownerType,
    instruction.provider,
    instruction.operation,
    instruction.amountKobo,
    instruction.narration,
    instruction.debitAccountNumber,
    instruction.creditAccountNumber,
    instruction.destinationBankCode,
    instruction.destinationAccountNumber,
    instruction.nameCheck,
    instruction.expectedAccountName,
    sendsAtOnce(instruction) ? 'sending' : 'ready',
    sendsAtOnce(instruction) ? 1 : 0,
    instruction.requeryFirstDelayMs,
    instruction.deadlineAt,
    instruction.lease?.token ?? null,
    instruction.lease?.expiresAt ?? null,
    sendsAtOnce(instruction) ? instruction.madeAt : null,
    sendsAtOnce(instruction) ? instruction.madeAt : null,
    instruction.madeAt,
  ]
}

const VALUE_TYPES = [
  'uuid',
  'uuid',
  'text',
  'text',
  'text',
  'bigint',
  'text',
  'text',
  'text',
  'text',
  'text',
  'boolean',
  'text',
  'text',
  'int',
  'int',
  'timestamptz',
  'uuid',
  'timestamptz',
  'timestamptz',
  'timestamptz',
  'timestamptz',
]

/**
 * Inserts instructions, and a work job for each one nobody holds (graphile-worker's add_jobs, once
 * for all), in one statement.
 */
export async function insertInstructions(
  db: Queryable,
  instructions: readonly NewInstruction[],
  task: string,
): Promise<Instruction[]> {
  if (instructions.length === 0) return []
  const rows = instructions.map(insertValues)
  const columns = VALUE_TYPES.map((_type, index) => rows.map((row) => row[index]))
  const { rows: inserted } = await db.query<Instruction & { jobs: number }>(
    `WITH created AS (
       INSERT INTO bank_instructions (${INSERT_COLUMNS})
       SELECT *
         FROM unnest(${VALUE_TYPES.map((type, index) => `$${index + 1}::${type}[]`).join(', ')})
           AS t(id, partner_id, owner_type, provider, operation, amount_kobo, narration, debit_account_number, credit_account_number, destination_bank_code,
                destination_account_number, name_check, expected_account_name, state, send_attempts, requery_first_delay_ms, deadline_at, lease_token,
                lease_expires_at, last_sent_at, last_signed_at, next_attempt_at)
       RETURNING ${COLUMN_NAMES}),
     jobs AS (
       SELECT count(*)::int AS n FROM ${addJobsSql(`
         SELECT ${jobSpecSql({ identifier: `$${VALUE_TYPES.length + 1}::text`, payload: "json_build_object('id', id)" })}
           FROM created WHERE lease_token IS NULL`)})
     SELECT ${camelColumns(COLUMN_NAMES, 'created')}, jobs.n AS jobs FROM created, jobs`,
    [...columns, task],
  )
  return inserted.map(({ jobs: _jobs, ...instruction }) => instruction)
}

export async function selectInstruction(db: Queryable, id: string): Promise<Instruction | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM bank_instructions WHERE id = $1`, [id])
}

export async function lockInstruction(db: Queryable, id: string): Promise<Instruction | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM bank_instructions WHERE id = $1 FOR UPDATE`, [id])
}

/**
 * Takes an instruction for one worker: only in one of `states`, and only if nobody holds it (or
 * the holder's lease ran out: it died, or is too slow to be trusted with it). The lease is wall
 * time, written and judged by the database's now(): it bounds a worker's calls to the bank, which
 * no application clock bends.
 */
export async function claimInstruction(
  db: Queryable,
  id: string,
  token: string,
  leaseMs: number,
  states: readonly InstructionState[] = WORKABLE,
): Promise<Instruction | undefined> {
  return one(
    db,
    `UPDATE bank_instructions SET lease_token = $2, lease_expires_at = now() + make_interval(secs => $3 / 1000.0)
      WHERE id = $1 AND state = ANY ($4::text[]) AND (lease_token IS NULL OR lease_expires_at < now())
      RETURNING ${COLUMNS}`,
    [id, token, leaseMs, states],
  )
}

/** Gives an instruction back without changing it (a step that failed; the next job or the sweep takes it). */
export async function releaseInstruction(db: Queryable, id: string, token: string): Promise<void> {
  await db.query(
    `UPDATE bank_instructions SET lease_token = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_token = $2`,
    [id, token],
  )
}

/** What a step records with its change of state. Absent fields keep their value. */
export interface StepFields {
  sendAttempts?: number
  requeryAttempts?: number
  verifiedAccountName?: string
  providerReference?: string | null
  responseCode?: string | null
  responseMessage?: string | null
  failureCode?: string
  failureMessage?: string
  /** When the pipeline next acts on it. */
  nextAttemptAt?: Date
  resolution?: Record<string, unknown>
  /** The bank answered that it has the payment (in progress or done): recorded once, when first said. */
  accepted?: boolean
}

/** One step to write: the holder's token, the state it moves to, what it records, whether it gives the lease back. */
export interface StepRow {
  id: string
  token: string
  next: InstructionState
  fields: StepFields
  release: boolean
}

/**
 * Writes a step of the holder of `token` at `at` (the caller's clock): the state (kept, or moved
 * as the transition table allows; never out of a final state), what the bank said, and whether the
 * lease is given back. Answers undefined when the holder no longer holds it or its state moved on:
 * the step changes nothing.
 */
export async function writeStep(
  db: Queryable,
  id: string,
  token: string,
  next: InstructionState,
  fields: StepFields,
  release: boolean,
  at: Date,
): Promise<Instruction | undefined> {
  return (await writeSteps(db, [{ id, token, next, fields, release }], at))[0]
}

/**
 * writeStep for many instructions in one statement (the steps arriving together): each row fenced
 * by its own token and its own allowed states, as if written alone; one answer per step, in order.
 */
export async function writeSteps(
  db: Queryable,
  steps: readonly StepRow[],
  at: Date,
): Promise<(Instruction | undefined)[]> {
  if (steps.length === 0) return []
  const column = <T>(pick: (step: StepRow) => T) => steps.map(pick)
  const { rows } = await db.query<Instruction & { step: number }>(
    `UPDATE bank_instructions i
        SET state = s.next,
            state_changed_at = CASE WHEN i.state = s.next THEN i.state_changed_at ELSE $18::timestamptz END,
            terminal_at = CASE WHEN s.next = ANY ($17::text[]) THEN $18::timestamptz END,
            send_attempts = coalesce(s.send_attempts, i.send_attempts),
            last_sent_at = CASE WHEN s.send_attempts IS NULL THEN i.last_sent_at ELSE $18::timestamptz END,
            last_signed_at = CASE WHEN s.send_attempts IS NULL THEN i.last_signed_at ELSE $18::timestamptz END,
            requery_attempts = coalesce(s.requery_attempts, i.requery_attempts),
            verified_account_name = coalesce(s.verified_account_name, i.verified_account_name),
            provider_reference = coalesce(s.provider_reference, i.provider_reference),
            response_code = coalesce(s.response_code, i.response_code),
            response_message = coalesce(s.response_message, i.response_message),
            failure_code = s.failure_code,
            failure_message = s.failure_message,
            next_attempt_at = coalesce(s.next_attempt_at, i.next_attempt_at),
            resolution = coalesce(s.resolution, i.resolution),
            lease_token = CASE WHEN s.release THEN NULL ELSE i.lease_token END,
            lease_expires_at = CASE WHEN s.release THEN NULL ELSE i.lease_expires_at END,
            accepted_at = CASE WHEN s.accepted THEN coalesce(i.accepted_at, $18::timestamptz) ELSE i.accepted_at END
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
                   $13::timestamptz[], $14::jsonb[], $15::boolean[], $16::boolean[]) WITH ORDINALITY
         AS s(id, token, next, allowed, send_attempts, requery_attempts, verified_account_name, provider_reference, response_code, response_message,
              failure_code, failure_message, next_attempt_at, resolution, release, accepted, step)
      WHERE i.id = s.id AND i.lease_token = s.token AND i.state <> ALL ($17::text[])
        AND (i.state = s.next OR i.state = ANY (string_to_array(s.allowed, ',')))
      RETURNING s.step, ${camelColumns(COLUMN_NAMES, 'i')}`,
    [
      column((step) => step.id),
      column((step) => step.token),
      column((step) => step.next),
      column((step) => instructionStates.from(step.next).join(',')),
      column((step) => step.fields.sendAttempts ?? null),
      column((step) => step.fields.requeryAttempts ?? null),
      column((step) => step.fields.verifiedAccountName ?? null),
      column((step) => step.fields.providerReference ?? null),
      column((step) => step.fields.responseCode ?? null),
      column((step) => step.fields.responseMessage ?? null),
      column((step) => step.fields.failureCode ?? null),
      column((step) => step.fields.failureMessage ?? null),
      column((step) => step.fields.nextAttemptAt ?? null),
      column((step) => (step.fields.resolution ? JSON.stringify(step.fields.resolution) : null)),
      column((step) => step.release),
      column((step) => step.fields.accepted ?? false),
      instructionStates.terminal,
      at,
    ],
  )
  const written: (Instruction | undefined)[] = new Array(steps.length).fill(undefined)
  for (const { step, ...instruction } of rows) written[Number(step) - 1] = instruction
  return written
}

/**
 * Instructions in flight that nobody holds and whose next step is overdue by `graceS` at `now` (the
 * pipeline's clock, which wrote the step's time): their process died. The lease is wall time: it
 * bounds a worker's I/O, so the database's now() judges it.
 */
export async function selectStranded(db: Queryable, now: Date, graceS: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    // WORKABLE (states.ts), written out: the partial index bank_instructions_in_flight holds these
    // states, and only a literal list lets the planner use it under a generic plan.
    `SELECT id FROM bank_instructions
      WHERE state IN ('ready', 'sending', 'sent') AND next_attempt_at < $1::timestamptz - make_interval(secs => $2)
        AND (lease_token IS NULL OR lease_expires_at < now())
      ORDER BY next_attempt_at LIMIT $3`,
    [now, graceS, limit],
  )
  return rows.map((row) => row.id)
}

/**
 * Unknown instructions whose slow requery is due by `now` (the pipeline's clock), no more than
 * `horizonMs` past their deadline (after that only an operator decides), held by nobody.
 */
export async function selectUnknownDue(db: Queryable, now: Date, horizonMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM bank_instructions
      WHERE state = 'unknown' AND next_attempt_at <= $1 AND deadline_at > $1::timestamptz - make_interval(secs => $2 / 1000.0)
        AND (lease_token IS NULL OR lease_expires_at < now())
      ORDER BY next_attempt_at LIMIT $3`,
    [now, horizonMs, limit],
  )
  return rows.map((row) => row.id)
}

/**
 * A sandbox partner's clock moved `seconds` ahead: its instructions in flight are judged by the
 * same (real) clock as every other, so their schedule — the requery deadline, the next requery,
 * the last send — moves as many seconds earlier. Answers those whose next step is now due.
 */
export async function bringForward(
  db: Queryable,
  partnerId: string,
  seconds: number,
  now: Date,
  inFlight: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string; due: boolean }>(
    `UPDATE bank_instructions
        SET deadline_at = deadline_at - make_interval(secs => $2::double precision), next_attempt_at = next_attempt_at - make_interval(secs => $2::double precision),
            last_sent_at = last_sent_at - make_interval(secs => $2::double precision)
      WHERE partner_id = $1 AND state = ANY ($4::text[])
      RETURNING id, next_attempt_at <= $3 AS due`,
    [partnerId, seconds, now, inFlight],
  )
  return rows.filter((row) => row.due).map((row) => row.id)
}

/** Fails an instruction that was never sent (its owner refused it in the transaction that made it). */
export async function failUnsent(
  db: Queryable,
  id: string,
  failureCode: string,
  failureMessage: string,
  at: Date,
): Promise<void> {
  await db.query(
    `UPDATE bank_instructions SET state = 'failed', failure_code = $2, failure_message = $3, terminal_at = $4, state_changed_at = $4
      WHERE id = $1 AND state = 'ready' AND send_attempts = 0`,
    [id, failureCode, failureMessage, at],
  )
}
