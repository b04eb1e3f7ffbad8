// SQL of wallet moves.
import { camelColumns, rowReaders, type Queryable } from '../platform/db.ts'
import { walletMoveStates, type MoveStatus, type MoveType } from './states.ts'

export interface Move {
  id: string
  partnerId: string
  reference: string
  requestHash: string
  type: MoveType
  status: MoveStatus
  walletId: string
  destinationWalletId: string | null
  amountKobo: number
  currency: string
  narration: string | null
  provider: string
  providerReference: string | null
  responseCode: string | null
  responseMessage: string | null
  holdTransferId: string | null
  destinationBankCode: string | null
  destinationAccountNumber: string | null
  destinationAccountName: string | null
  createdAt: Date
  completedAt: Date | null
}

const COLUMN_NAMES = `id, partner_id, reference, request_hash, type, status, wallet_id, destination_wallet_id, amount_kobo, currency, narration, provider,
  provider_reference, response_code, response_message, hold_transfer_id, destination_bank_code, destination_account_number, destination_account_name,
  created_at, completed_at`
const COLUMNS = camelColumns(COLUMN_NAMES)

const { one, all } = rowReaders((row: Move) => row)

export type NewMove = Pick<
  Move,
  | 'id'
  | 'partnerId'
  | 'reference'
  | 'requestHash'
  | 'type'
  | 'walletId'
  | 'destinationWalletId'
  | 'amountKobo'
  | 'currency'
  | 'narration'
  | 'provider'
  | 'holdTransferId'
  | 'destinationBankCode'
  | 'destinationAccountNumber'
  | 'destinationAccountName'
>

const MOVE_TYPES = [
  'uuid',
  'uuid',
  'text',
  'text',
  'text',
  'uuid',
  'uuid',
  'bigint',
  'text',
  'text',
  'text',
  'uuid',
  'text',
  'text',
  'text',
]

/**
 * Claims many references in one statement: the moves made, in no particular order. A reference the
 * partner used before — or earlier in the same batch — makes no row.
 */
export async function insertMoves(db: Queryable, moves: readonly NewMove[]): Promise<Move[]> {
  if (moves.length === 0) return []
  const columns: unknown[][] = MOVE_TYPES.map(() => [])
  for (const move of moves) {
    const values = [
      move.id,
      move.partnerId,
      move.reference,
      move.requestHash,
      move.type,
      move.walletId,
      move.destinationWalletId,
      move.amountKobo,
      move.currency,
      move.narration,
      move.provider,
      move.holdTransferId,
      move.destinationBankCode,
      move.destinationAccountNumber,
      move.destinationAccountName,
    ]
    values.forEach((value, index) => columns[index]!.push(value))
  }
  return all(
    db,
    `INSERT INTO wallet_moves (id, partner_id, reference, request_hash, type, status, wallet_id, destination_wallet_id, amount_kobo, currency, narration,
                               provider, hold_transfer_id, destination_bank_code, destination_account_number, destination_account_name)
     SELECT id, partner_id, reference, request_hash, type, 'pending', wallet_id, destination_wallet_id, amount_kobo, currency, narration,
            provider, hold_transfer_id, destination_bank_code, destination_account_number, destination_account_name
       FROM unnest(${MOVE_TYPES.map((type, index) => `$${index + 1}::${type}[]`).join(', ')})
         AS t(id, partner_id, reference, request_hash, type, wallet_id, destination_wallet_id, amount_kobo, currency, narration,
              provider, hold_transfer_id, destination_bank_code, destination_account_number, destination_account_name)
     ON CONFLICT ON CONSTRAINT wallet_moves_one_per_reference DO NOTHING
     RETURNING ${COLUMNS}`,
    columns,
  )
}

/**
 * Takes back moves claimed earlier in the caller's transaction whose hold the ledger refused (too
 * little available): nothing of them was ever visible, and their references stay free.
 */
export async function deleteUnheldMoves(tx: Queryable, moveIds: readonly string[]): Promise<void> {
  if (moveIds.length === 0) return
  await tx.query(`DELETE FROM wallet_moves WHERE id = ANY ($1::uuid[]) AND status = 'pending'`, [moveIds])
}

export async function selectMoveByReference(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<Move | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM wallet_moves WHERE partner_id = $1 AND reference = $2`, [partnerId, reference])
}

export async function selectMove(db: Queryable, moveId: string): Promise<Move | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM wallet_moves WHERE id = $1`, [moveId])
}

export interface ProviderAnswer {
  providerReference: string | null
  responseCode: string | null
  responseMessage: string | null
}

/** One move's change of status in a batch, and what the bank said. */
export interface MoveChange {
  moveId: string
  next: MoveStatus
  answer: ProviderAnswer
}

/**
 * Moves many statuses in one statement at `at` (the caller's clock), each only from a status
 * allowed to reach its `next` (states.ts, passed along per row); answers the moves changed. The
 * caller makes their ledger transfers in the same transaction.
 */
export async function transitionMoves(db: Queryable, changes: readonly MoveChange[], at: Date): Promise<Move[]> {
  if (changes.length === 0) return []
  return all(
    db,
    `UPDATE wallet_moves m
        SET status = c.next,
            provider_reference = COALESCE(c.provider_reference, m.provider_reference),
            response_code = COALESCE(c.response_code, m.response_code),
            response_message = COALESCE(c.response_message, m.response_message),
            completed_at = CASE WHEN c.next = ANY ($7::text[]) THEN $8::timestamptz ELSE NULL END
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS c(id, next, allowed, provider_reference, response_code, response_message)
      WHERE m.id = c.id AND m.status = ANY (string_to_array(c.allowed, ','))
      RETURNING ${camelColumns(COLUMN_NAMES, 'm')}`,
    [
      changes.map((change) => change.moveId),
      changes.map((change) => change.next),
      changes.map((change) => walletMoveStates.from(change.next).join(',')),
      changes.map((change) => change.answer.providerReference),
      changes.map((change) => change.answer.responseCode),
      changes.map((change) => change.answer.responseMessage),
      walletMoveStates.terminal,
      at,
    ],
  )
}

/** What the bank said about many moves, recorded without changing their status (recordAnswer for a batch). */
export async function recordAnswers(
  db: Queryable,
  answers: readonly { moveId: string; answer: ProviderAnswer }[],
): Promise<void> {
  if (answers.length === 0) return
  await db.query(
    `UPDATE wallet_moves m
        SET provider_reference = COALESCE(a.provider_reference, m.provider_reference),
            response_code = COALESCE(a.response_code, m.response_code),
            response_message = COALESCE(a.response_message, m.response_message)
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS a(id, provider_reference, response_code, response_message)
      WHERE m.id = a.id AND m.status = ANY ($5::text[])`,
    [
      answers.map((entry) => entry.moveId),
      answers.map((entry) => entry.answer.providerReference),
      answers.map((entry) => entry.answer.responseCode),
      answers.map((entry) => entry.answer.responseMessage),
      walletMoveStates.open,
    ],
  )
}

/** What a statement line shows of the moves behind it: each one's reference and narration. */
export async function selectStatementFacts(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; reference: string; narration: string | null }[]> {
  const result = await db.query<{ id: string; reference: string; narration: string | null }>(
    `SELECT id, reference, narration FROM wallet_moves WHERE id = ANY ($1::uuid[])`,
    [ids],
  )
  return result.rows
}
