// Transfers on the sandbox bank's own books, answered at once with NIP codes: between customers,
// to and from the settlement pool, interbank sends and payouts (in progress until they settle),
// and requery by reference. Outcomes follow docs/banking.md.
import { findBank } from '../banking/nip/banks.ts'
import { nipMessage } from '../banking/nip/codes.ts'
import { isValidNuban } from '../banking/nip/nuban.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { ACCOUNT_BALANCE_MAX_KOBO, settlementAccount, type BankBooks } from './accounts.ts'
import { interbankOutcome, magicAmount, SETTLE_DELAY_MS } from './magic.ts'
import type { TransferAnswer, TransferKind, TransferRequest } from './types.ts'

/** The NIP code a payout fails with when the simulator registers `failed`: 05, do not honour. */
export const PAYOUT_FAILED_CODE = '05'

/** A new NIP session id (banking/nip/session-id.ts: institution code in $1, yyMMddHHmmss UTC, 12-digit sequence), made in the INSERT itself: no round trip for the sequence. */
export const SESSION_ID_SQL = `$1 || to_char(now() AT TIME ZONE 'UTC', 'YYMMDDHH24MISS') || lpad(nextval('sandbox_bank.session_sequence')::text, 12, '0')`

/**
 * A transfer on the bank's own books, answered at once: 00, or the NIP code of the refusal. A
 * reference is used once: asked again, the bank answers 26 (duplicate) and moves nothing.
 */
export async function transfer(bank: BankBooks, request: TransferRequest): Promise<TransferAnswer> {
  try {
    if (request.kind === 'payout') return await withTransaction(bank.pool, (tx) => payoutOnce(bank, tx, request))
    return await transferOnBooks(bank, request)
  } catch (error) {
    // The reference was used already (or, concurrently, is being used and that transfer
    // committed first): whatever this attempt moved was rolled back with it. The unique
    // reference is the check, so the usual transfer pays no look-up for duplicates.
    if ((error as { constraint?: string }).constraint !== 'transfers_reference_key') throw error
    const original = await bank.pool.query<{ session_id: string }>(
      `SELECT session_id FROM sandbox_bank.transfers WHERE reference = $1`,
      [request.reference],
    )
    return transferAnswer(request, '26', original.rows[0]!.session_id)
  }
}

/**
 * A book transfer, a credit, a debit or an interbank send: what only the request decides (a magic
 * amount, a bad destination, the final outcome of a send) is decided here; the accounts are
 * locked, checked and moved and the transfer recorded by one call of
 * sandbox_bank.transfer_on_books, in autocommit: one round trip and one transaction.
 *
 * The settlement pool (`settlement`) is the bank's own side of every client's credits, debits,
 * sends and inbound credits: it is never checked, so it is not locked, and it is not booked —
 * its position is the sum of its transfers. A running balance shared by every client would let
 * one client's volume leave the range of BIGINT or of JavaScript numbers and break every other
 * client's transfers (and make every credit in the bank wait on one row). Customer balances are
 * checked in SQL and never pass ACCOUNT_BALANCE_MAX_KOBO, counting what the credited account has
 * sent that may come back.
 */
async function transferOnBooks(bank: BankBooks, request: TransferRequest): Promise<TransferAnswer> {
  const interbank = request.kind === 'interbank'
  // Only credits, debits and interbank transfers touch the settlement pool.
  const settlement = request.kind === 'book' ? '' : await settlementAccount(bank.pool, bank.bankCode)
  const debit = request.kind === 'credit' ? settlement : (request.debitAccountNumber ?? '')
  const credit = request.kind === 'debit' || interbank ? settlement : (request.creditAccountNumber ?? '')
  const magic = magicAmount(request.amountKobo)
  const refusal =
    (magic?.kind === 'code' ? magic.code : undefined) ??
    (interbank
      ? refuseDestination(request.destinationBankCode ?? '', request.destinationAccountNumber ?? '')
      : undefined)
  // An accepted interbank transfer has left the account; it is in progress until it settles.
  // So is any transfer of the magic "pending, then success" amount.
  const held = interbank || magic?.kind === 'pending_then_success'
  const finalCode = interbank ? interbankOutcome(request.destinationAccountNumber!).finalCode : '00'
  const { rows } = await bank.pool.query<{ session_id: string; response_code: string }>(
    `SELECT session_id, response_code FROM sandbox_bank.transfer_on_books($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
    [
      `000${bank.bankCode}`,
      request.reference,
      request.kind,
      debit,
      credit,
      settlement,
      request.amountKobo,
      request.narration ?? null,
      refusal ?? null,
      held,
      finalCode,
      interbank ? request.destinationBankCode : null,
      interbank ? request.destinationAccountNumber : null,
      new Date(bank.clock.now().getTime() + SETTLE_DELAY_MS),
      ACCOUNT_BALANCE_MAX_KOBO,
    ],
  )
  return transferAnswer(request, rows[0]!.response_code, rows[0]!.session_id)
}

/**
 * A payout from the settlement pool (the merchant's funds at the bank) to an account at another
 * bank: checked, then in progress (09) until an outcome is registered for it (registerOutcome);
 * the money leaves the pool when it settles with 00.
 */
async function payoutOnce(bank: BankBooks, tx: Queryable, request: TransferRequest): Promise<TransferAnswer> {
  const settlement = await settlementAccount(tx, bank.bankCode)
  const magic = magicAmount(request.amountKobo)
  const refusal =
    (magic?.kind === 'code' ? magic.code : undefined) ??
    refuseDestination(request.destinationBankCode ?? '', request.destinationAccountNumber ?? '')
  const inserted = await tx.query<{ session_id: string }>(
    `INSERT INTO sandbox_bank.transfers (session_id, reference, kind, debit_account_number, credit_account_number, amount_kobo, narration, response_code,
                                         destination_bank_code, destination_account_number, final_code)
     VALUES (${SESSION_ID_SQL}, $2, 'payout', $3, $4, $5, $6, $7, $8, $4, $9)
     RETURNING session_id`,
    [
      `000${bank.bankCode}`,
      request.reference,
      settlement,
      request.destinationAccountNumber,
      request.amountKobo,
      request.narration ?? null,
      refusal ?? '09',
      request.destinationBankCode,
      refusal ? null : '09', // nothing registered yet: in progress for good
    ],
  )
  return transferAnswer(request, refusal ?? '09', inserted.rows[0]!.session_id)
}

/**
 * Whether to drop this submission of `reference` unprocessed (the magic amount of a lost
 * request): true the first time only, whichever process serving the bank is asked, and however
 * many ask at once.
 */
export async function dropFirstSubmission(pool: Pool, reference: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `INSERT INTO sandbox_bank.dropped_submissions (reference) VALUES ($1) ON CONFLICT (reference) DO NOTHING`,
    [reference],
  )
  return rowCount === 1
}

/**
 * The sandbox simulator's outcome for a payout in progress; registering again before it settles
 * replaces the earlier one. It settles at the next requery. False when no payout in progress has
 * this reference.
 */
export async function registerOutcome(
  bank: BankBooks,
  reference: string,
  outcome: 'confirmed' | 'failed',
  listeners: readonly PayoutListener[] = [],
): Promise<boolean> {
  const registered = `UPDATE sandbox_bank.transfers SET final_code = $2, settles_at = $3 WHERE reference = $1 AND kind = 'payout' AND response_code = '09' RETURNING reference`
  const { rows } = await bank.pool.query<{ changed: number }>(withAnnouncements(registered, listeners, 'settled'), [
    reference,
    outcome === 'confirmed' ? '00' : PAYOUT_FAILED_CODE,
    bank.clock.now(),
  ])
  return rows[0]!.changed === 1
}

/**
 * A provider dialect's interest in the bank's payouts: the table of the payouts made through it
 * (their `reference`), and the job that announces a change to one of them (its webhook). The job is
 * queued by the statement that makes the change, so it exists only if the change does, and a
 * payout made otherwise costs nothing more than its own change.
 */
export interface PayoutListener {
  /** A closed constant of the dialect's code, never input: it is written into the SQL. */
  payoutsTable: string
  task: string
  maxAttempts: number
}

/**
 * The statement that changes a payout (`change`: an UPDATE … RETURNING reference, its parameters
 * from $1) with, in the same statement, each listener's job for a payout it made ($-free: the
 * announcement's kind is a literal). Answers one row: `changed`, how many payouts changed.
 */
function withAnnouncements(change: string, listeners: readonly PayoutListener[], kind: 'settled' | 'reversed'): string {
  const announcements = listeners.map(
    (listener, index) => `, announced_${index} AS (
      SELECT graphile_worker.add_job(identifier => '${listener.task}', payload => json_build_object('reference', c.reference, 'change', '${kind}'), max_attempts => ${listener.maxAttempts})
        FROM changed c WHERE EXISTS (SELECT 1 FROM ${listener.payoutsTable} p WHERE p.reference = c.reference))`,
  )
  const counted = listeners.map((_listener, index) => ` + 0 * (SELECT count(*) FROM announced_${index})`).join('')
  return `WITH changed AS (${change})${announcements.join('')} SELECT ((SELECT count(*) FROM changed)${counted})::int AS changed`
}

/**
 * The sandbox simulator reverses a payout that settled with 00: the money comes back to the
 * settlement pool. The bank still answers 00 on a requery (NIP has no code for it); a provider
 * dialect says `reversed`. A payout whose registered outcome is due is settled first.
 */
export async function reversePayout(
  bank: BankBooks,
  reference: string,
  listeners: readonly PayoutListener[] = [],
): Promise<'reversed' | 'not_reversible'> {
  await settleIfDue(bank, reference)
  const reversed = `UPDATE sandbox_bank.transfers SET reversed_at = $2 WHERE reference = $1 AND kind = 'payout' AND response_code = '00' AND reversed_at IS NULL RETURNING reference`
  const { rows } = await bank.pool.query<{ changed: number }>(withAnnouncements(reversed, listeners, 'reversed'), [
    reference,
    bank.clock.now(),
  ])
  return rows[0]!.changed === 1 ? 'reversed' : 'not_reversible'
}

/** What happened to a reference: the transfer's own code, or 25 when the bank has no record. */
export async function requery(bank: BankBooks, reference: string): Promise<TransferAnswer> {
  await settleIfDue(bank, reference)
  const found = await bank.pool.query<{ session_id: string; response_code: string; amount_kobo: number }>(
    `SELECT session_id, response_code, amount_kobo FROM sandbox_bank.transfers WHERE reference = $1`,
    [reference],
  )
  const row = found.rows[0]
  if (!row) return transferAnswer({ reference, amountKobo: 0 }, '25', '')
  return transferAnswer({ reference, amountKobo: row.amount_kobo }, row.response_code, row.session_id)
}

/**
 * Settles a transfer in progress whose moment has come: its final code is recorded and, for a
 * failure, the money goes back to the customer — once, under the transfer's row lock. The bank
 * settles when asked about a transfer, which is how its outcome becomes visible anyway. Due is
 * judged by the bank's clock, the one that set the moment (a test moves it instead of sleeping).
 */
async function settleIfDue(bank: BankBooks, reference: string): Promise<void> {
  await withTransaction(bank.pool, async (tx) => {
    const due = await tx.query<{
      kind: TransferKind
      debit_account_number: string
      credit_account_number: string
      amount_kobo: number
      final_code: string
    }>(
      `SELECT kind, debit_account_number, credit_account_number, amount_kobo, final_code FROM sandbox_bank.transfers
        WHERE reference = $1 AND response_code = '09' AND final_code <> '09' AND settles_at <= $2
        FOR UPDATE`,
      [reference, bank.clock.now()],
    )
    const transfer = due.rows[0]
    if (!transfer) return
    // A payout leaves the settlement pool, which is not booked (applyTransfer): settling it moves
    // no customer's money. A failed transfer gives the money back to its customer; its room under
    // ACCOUNT_BALANCE_MAX_KOBO was kept while it was in progress.
    if (transfer.kind !== 'payout' && transfer.final_code !== '00') {
      await tx.query(
        `UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo + CASE WHEN account_number = $1 THEN -$3::bigint ELSE $3::bigint END
          WHERE account_number IN ($1, $2) AND kind <> 'settlement'`,
        [transfer.credit_account_number, transfer.debit_account_number, transfer.amount_kobo],
      )
    }
    await tx.query(`UPDATE sandbox_bank.transfers SET response_code = final_code WHERE reference = $1`, [reference])
  })
}

/** The NIP code refusing an interbank destination, or undefined when it is a valid account at a known bank. */
function refuseDestination(bankCode: string, accountNumber: string): string | undefined {
  if (!findBank(bankCode)) return '16'
  if (!isValidNuban(bankCode, accountNumber)) return '07'
  return undefined
}

function transferAnswer(
  request: Pick<TransferRequest, 'reference' | 'amountKobo'>,
  responseCode: string,
  sessionId: string,
): TransferAnswer {
  return {
    reference: request.reference,
    sessionId,
    amountKobo: request.amountKobo,
    responseCode,
    responseMessage: nipMessage(responseCode),
  }
}
