// Inbound credits at the sandbox bank: someone pays into an account that has a client (a virtual
// account, or a wallet's customer account), and the bank announces it to that client — by a
// webhook job, and to a client that asks again, by listing the account's credits.
import { nipMessage } from '../banking/nip/codes.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { addJob } from '../platform/jobs.ts'
import { ACCOUNT_BALANCE_MAX_KOBO, type BankBooks } from './accounts.ts'
import { NOTICE_ATTEMPTS_MAX } from './client-webhooks.ts'
import { magicAmount } from './magic.ts'
import { SESSION_ID_SQL } from './transfers.ts'
import type { InboundCreditAnswer, InboundCreditNotice, InboundCreditRequest } from './types.ts'

/** The job that announces an inbound credit to the account's client. */
export const NOTIFY_TASK = 'sandbox_bank_notify'

/**
 * Someone at any bank pays into one of this bank's accounts that has a client — a virtual
 * account, or a wallet's customer account: the credit is recorded under a new NIP session id,
 * and a job announces it to the account's client (unless a magic amount says the announcement
 * is lost). Paid into a virtual account, the money lands in the settlement pool; into a
 * customer account, it is that customer's (refused with 61 past ACCOUNT_BALANCE_MAX_KOBO).
 * Archived accounts still receive: the bank leaves it to its client to triage them, as many
 * providers do.
 */
export async function receiveInboundCredit(
  bank: BankBooks,
  credit: InboundCreditRequest,
): Promise<InboundCreditAnswer | undefined> {
  return withTransaction(bank.pool, async (tx) => {
    const account = await tx.query<{ client: string; kind: 'virtual' | 'customer' }>(
      `SELECT client, kind FROM sandbox_bank.accounts WHERE account_number = $1 AND kind IN ('virtual', 'customer') AND client IS NOT NULL`,
      [credit.accountNumber],
    )
    const found = account.rows[0]
    if (!found) return undefined
    const answer = (responseCode: string, sessionId: string, creditedAt: Date, notified: boolean) => ({
      sessionId,
      accountNumber: credit.accountNumber,
      amountKobo: credit.amountKobo,
      creditedAt: creditedAt.toISOString(),
      notified,
      responseCode,
      responseMessage: nipMessage(responseCode),
    })
    // Into the settlement pool, which is not booked (transfers.ts): nothing to update. Into a customer's account: its balance.
    if (found.kind === 'customer' && !(await creditCustomer(tx, credit.accountNumber, credit.amountKobo)))
      return answer('61', '', bank.clock.now(), false)
    const inserted = await tx.query<{ session_id: string; created_at: Date }>(
      `INSERT INTO sandbox_bank.transfers (session_id, reference, kind, debit_account_number, credit_account_number, amount_kobo, narration, response_code,
                                           payer_name, payer_account_number, payer_bank_code)
       VALUES (${SESSION_ID_SQL}, 'inbound-' || gen_random_uuid(), 'inbound', coalesce($4, 'external'), $2, $3, $5, '00', $6, $4, $7)
       RETURNING session_id, created_at`,
      [
        `000${credit.payerBankCode ?? bank.bankCode}`.slice(-6),
        credit.accountNumber,
        credit.amountKobo,
        credit.payerAccountNumber ?? null,
        credit.narration ?? null,
        credit.payerName ?? null,
        credit.payerBankCode ?? null,
      ],
    )
    const { session_id: sessionId, created_at: creditedAt } = inserted.rows[0]!
    const notify = magicAmount(credit.amountKobo)?.kind !== 'lost_notification'
    if (notify) await addJob(tx, NOTIFY_TASK, { sessionId }, { maxAttempts: NOTICE_ATTEMPTS_MAX })
    return answer('00', sessionId, creditedAt, notify)
  })
}

/**
 * An inbound credit into a customer's account: its balance grows, within what it may hold
 * (counting what it has sent that may come back, as a transfer does). False when refused.
 */
async function creditCustomer(tx: Queryable, accountNumber: string, amountKobo: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE sandbox_bank.accounts c SET balance_kobo = balance_kobo + $2::bigint
      WHERE account_number = $1 AND kind = 'customer'
        AND c.balance_kobo + $2::numeric + coalesce((SELECT sum(t.amount_kobo) FROM sandbox_bank.transfers t
                                                      WHERE t.debit_account_number = c.account_number AND t.kind = 'interbank' AND t.response_code = '09'), 0)
            <= $3::numeric`,
    [accountNumber, amountKobo, ACCOUNT_BALANCE_MAX_KOBO],
  )
  return rowCount === 1
}

/** The most credits one listing answers (the oldest first). */
export const INBOUND_CREDITS_LISTED_MAX = 1_000

/**
 * The inbound credits of an account of a client (a virtual account or a wallet's), oldest first:
 * what a client requeries for credits it missed; with `since`, only those credited at or after it
 * (a client's sweep asks for what came since its last).
 */
export async function inboundCredits(
  pool: Pool,
  client: string,
  accountNumber: string,
  since?: Date,
): Promise<InboundCreditNotice[] | undefined> {
  const account = await pool.query(
    `SELECT 1 FROM sandbox_bank.accounts WHERE account_number = $1 AND kind IN ('virtual', 'customer') AND client = $2`,
    [accountNumber, client],
  )
  if (account.rowCount === 0) return undefined
  const found = await pool.query<InboundRow>(
    `${INBOUND_SELECT} WHERE t.kind = 'inbound' AND t.credit_account_number = $1 AND ($2::timestamptz IS NULL OR t.created_at >= $2)
      ORDER BY t.created_at, t.session_id LIMIT ${INBOUND_CREDITS_LISTED_MAX}`,
    [accountNumber, since ?? null],
  )
  return found.rows.map(toInboundNotice)
}

/** The announcement of one inbound credit, and the client it goes to. */
export async function inboundNotice(
  pool: Pool,
  sessionId: string,
): Promise<{ client: string; notice: InboundCreditNotice } | undefined> {
  const found = await pool.query<InboundRow>(`${INBOUND_SELECT} WHERE t.session_id = $1 AND t.kind = 'inbound'`, [
    sessionId,
  ])
  const row = found.rows[0]
  return row && { client: row.client, notice: toInboundNotice(row) }
}

export async function markNotified(pool: Pool, sessionId: string): Promise<void> {
  await pool.query(
    `UPDATE sandbox_bank.transfers SET notified_at = coalesce(notified_at, now()) WHERE session_id = $1`,
    [sessionId],
  )
}

interface InboundRow {
  session_id: string
  credit_account_number: string
  bank_code: string
  client: string
  client_reference: string
  amount_kobo: number
  payer_name: string | null
  payer_account_number: string | null
  payer_bank_code: string | null
  narration: string | null
  created_at: Date
}

// A wallet's account has no client reference of its own: its opening reference is the one its client gave.
const INBOUND_SELECT = `SELECT t.session_id, t.credit_account_number, a.bank_code, a.client, coalesce(a.client_reference, a.opening_reference, a.account_number) AS client_reference, t.amount_kobo, t.payer_name, t.payer_account_number, t.payer_bank_code, t.narration, t.created_at
  FROM sandbox_bank.transfers t JOIN sandbox_bank.accounts a ON a.account_number = t.credit_account_number`

function toInboundNotice(row: InboundRow): InboundCreditNotice {
  return {
    type: 'credit.received',
    sessionId: row.session_id,
    accountNumber: row.credit_account_number,
    bankCode: row.bank_code,
    amountKobo: row.amount_kobo,
    currency: 'NGN',
    payerName: row.payer_name,
    payerAccountNumber: row.payer_account_number,
    payerBankCode: row.payer_bank_code,
    narration: row.narration,
    creditedAt: row.created_at.toISOString(),
    clientReference: row.client_reference,
  }
}
