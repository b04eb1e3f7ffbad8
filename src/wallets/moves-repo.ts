// SQL of wallet moves.
import { transferInStatement, type TransferInput } from '../ledger/service.ts'
import type { Queryable } from '../platform/db.ts'
import { allowedFrom, type MoveStatus, type MoveType } from './states.ts'

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

interface MoveRow {
  id: string
  partner_id: string
  reference: string
  request_hash: string
  type: MoveType
  status: MoveStatus
  wallet_id: string
  destination_wallet_id: string | null
  amount_kobo: number
  currency: string
  narration: string | null
  provider: string
  provider_reference: string | null
  response_code: string | null
  response_message: string | null
  hold_transfer_id: string | null
  destination_bank_code: string | null
  destination_account_number: string | null
  destination_account_name: string | null
  created_at: Date
  completed_at: Date | null
}

const COLUMNS = `id, partner_id, reference, request_hash, type, status, wallet_id, destination_wallet_id, amount_kobo, currency, narration, provider,
  provider_reference, response_code, response_message, hold_transfer_id, destination_bank_code, destination_account_number, destination_account_name,
  created_at, completed_at`

function toMove(row: MoveRow): Move {
  return {
    id: row.id,
    partnerId: row.partner_id,
    reference: row.reference,
    requestHash: row.request_hash,
    type: row.type,
    status: row.status,
    walletId: row.wallet_id,
    destinationWalletId: row.destination_wallet_id,
    amountKobo: row.amount_kobo,
    currency: row.currency,
    narration: row.narration,
    provider: row.provider,
    providerReference: row.provider_reference,
    responseCode: row.response_code,
    responseMessage: row.response_message,
    holdTransferId: row.hold_transfer_id,
    destinationBankCode: row.destination_bank_code,
    destinationAccountNumber: row.destination_account_number,
    destinationAccountName: row.destination_account_name,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

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

/** A row another module makes in the claim's statement, from the claimed move (a CTE over it), and answers. */
export type ClaimCompanion = (source: string, firstParam: number) => { sql: string; params: unknown[] }

/**
 * Claims the reference: the new move, or undefined when the partner already used the reference.
 * One statement (one round trip, one implicit transaction, or the caller's): with a hold, the
 * ledger's pending transfer — a refused hold raises and nothing is recorded — and with a
 * companion, its row (the move's bank instruction), made only when the move is.
 */
export async function insertMove(db: Queryable, move: NewMove, hold?: TransferInput, companion?: ClaimCompanion): Promise<{ move: Move; companion: Record<string, unknown> | null } | undefined> {
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
  const transfer = hold && transferInStatement(hold, values.length + 1)
  const made = companion?.('claimed', values.length + (transfer?.params.length ?? 0) + 1)
  const result = await db.query<MoveRow & { companion: Record<string, unknown> | null }>(
    `WITH claimed AS (
       INSERT INTO wallet_moves (id, partner_id, reference, request_hash, type, status, wallet_id, destination_wallet_id, amount_kobo, currency, narration,
                                 provider, hold_transfer_id, destination_bank_code, destination_account_number, destination_account_name)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT ON CONSTRAINT wallet_moves_one_per_reference DO NOTHING
       RETURNING ${COLUMNS})${made ? `,
     companion AS (${made.sql})` : ''}
     SELECT claimed.*${made ? ', (SELECT row_to_json(companion) FROM companion) AS companion' : ', NULL AS companion'}${transfer ? `, ${transfer.sql} AS hold_result` : ''} FROM claimed`,
    [...values, ...(transfer?.params ?? []), ...(made?.params ?? [])],
  )
  const row = result.rows[0]
  return row && { move: toMove(row), companion: row.companion }
}

export async function selectMoveByReference(db: Queryable, partnerId: string, reference: string): Promise<Move | undefined> {
  const result = await db.query<MoveRow>(`SELECT ${COLUMNS} FROM wallet_moves WHERE partner_id = $1 AND reference = $2`, [partnerId, reference])
  return result.rows[0] && toMove(result.rows[0])
}

export async function selectMove(db: Queryable, moveId: string): Promise<Move | undefined> {
  const result = await db.query<MoveRow>(`SELECT ${COLUMNS} FROM wallet_moves WHERE id = $1`, [moveId])
  return result.rows[0] && toMove(result.rows[0])
}

export interface ProviderAnswer {
  providerReference: string | null
  responseCode: string | null
  responseMessage: string | null
}

/**
 * Moves the status to `next` only from a status allowed to reach it; undefined when it was not.
 * The ledger transfer that goes with the change, if any, is made in the same statement, and only
 * when the change is made: one round trip, and a refused transfer raises and undoes the change.
 */
export async function transitionMove(db: Queryable, moveId: string, next: MoveStatus, answer: ProviderAnswer, transfer?: TransferInput): Promise<Move | undefined> {
  const values = [moveId, next, allowedFrom(next), answer.providerReference, answer.responseCode, answer.responseMessage]
  const withTransfer = transfer && transferInStatement(transfer, values.length + 1)
  const result = await db.query<MoveRow>(
    `WITH changed AS (
       UPDATE wallet_moves
          SET status = $2,
              provider_reference = COALESCE($4, provider_reference),
              response_code = COALESCE($5, response_code),
              response_message = COALESCE($6, response_message),
              completed_at = CASE WHEN $2 IN ('successful', 'failed') THEN now() ELSE NULL END
        WHERE id = $1 AND status = ANY ($3::text[])
        RETURNING ${COLUMNS})
     SELECT changed.*${withTransfer ? `, ${withTransfer.sql} AS transfer_result` : ''} FROM changed`,
    [...values, ...(withTransfer?.params ?? [])],
  )
  return result.rows[0] && toMove(result.rows[0])
}

/** Records a provider's answer that is not final (e.g. NIP 09) without changing the status. */
export async function recordAnswer(db: Queryable, moveId: string, answer: ProviderAnswer): Promise<Move | undefined> {
  const result = await db.query<MoveRow>(
    `UPDATE wallet_moves
        SET provider_reference = COALESCE($2, provider_reference), response_code = COALESCE($3, response_code), response_message = COALESCE($4, response_message)
      WHERE id = $1 AND status IN ('pending', 'unknown')
      RETURNING ${COLUMNS}`,
    [moveId, answer.providerReference, answer.responseCode, answer.responseMessage],
  )
  return result.rows[0] && toMove(result.rows[0])
}
