// verifyLedger(): recomputes every account's totals from the transfers and checks the global
// invariants. Run by `rail ledger verify` and at the end of every test that moves money.
import type { Queryable } from '../platform/db.ts'

export interface LedgerVerification {
  ok: boolean
  accountsChecked: number
  transfersChecked: number
  problems: string[]
}

/** Problems reported at most; one is enough to fail, the rest help diagnose. */
const PROBLEMS_MAX = 50

export async function verifyLedger(db: Queryable): Promise<LedgerVerification> {
  const problems: string[] = []
  const counts = await db.query<{ accounts: number; transfers: number }>(
    `SELECT (SELECT count(*)::int FROM ledger_accounts) AS accounts, (SELECT count(*)::int FROM ledger_transfers) AS transfers`,
  )
  problems.push(...(await accountsDisagreeingWithTransfers(db)))
  problems.push(...(await unbalancedCurrencies(db)))
  problems.push(...(await accountsBreakingTheirFlags(db)))
  problems.push(...(await transfersAcrossCurrencies(db)))
  problems.push(...(await pendingStatesWithoutTheirResolution(db)))
  return {
    ok: problems.length === 0,
    accountsChecked: counts.rows[0]!.accounts,
    transfersChecked: counts.rows[0]!.transfers,
    problems: problems.slice(0, PROBLEMS_MAX),
  }
}

/**
 * Posted totals are the sums of single and post transfers; pending totals are the sums of
 * pending transfers still pending (a post or void released them).
 */
async function accountsDisagreeingWithTransfers(db: Queryable): Promise<string[]> {
  const result = await db.query<{ id: string; stored: string; expected: string }>(
    `WITH movements AS (
       SELECT debit_account_id AS account_id, amount_kobo AS debits_posted, 0::bigint AS credits_posted, 0::bigint AS debits_pending, 0::bigint AS credits_pending
         FROM ledger_transfers WHERE phase IN ('single', 'post')
       UNION ALL
       SELECT credit_account_id, 0, amount_kobo, 0, 0 FROM ledger_transfers WHERE phase IN ('single', 'post')
       UNION ALL
       SELECT t.debit_account_id, 0, 0, t.amount_kobo, 0
         FROM ledger_transfers t JOIN ledger_pending_transfers p ON p.transfer_id = t.id WHERE p.status = 'pending'
       UNION ALL
       SELECT t.credit_account_id, 0, 0, 0, t.amount_kobo
         FROM ledger_transfers t JOIN ledger_pending_transfers p ON p.transfer_id = t.id WHERE p.status = 'pending'
     ), expected AS (
       SELECT account_id, sum(debits_posted) AS debits_posted, sum(credits_posted) AS credits_posted,
              sum(debits_pending) AS debits_pending, sum(credits_pending) AS credits_pending
         FROM movements GROUP BY account_id
     )
     SELECT a.id,
            format('%s/%s/%s/%s', a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted) AS stored,
            format('%s/%s/%s/%s', COALESCE(e.debits_pending, 0), COALESCE(e.debits_posted, 0), COALESCE(e.credits_pending, 0), COALESCE(e.credits_posted, 0)) AS expected
       FROM ledger_accounts a LEFT JOIN expected e ON e.account_id = a.id
      WHERE a.debits_posted <> COALESCE(e.debits_posted, 0) OR a.credits_posted <> COALESCE(e.credits_posted, 0)
         OR a.debits_pending <> COALESCE(e.debits_pending, 0) OR a.credits_pending <> COALESCE(e.credits_pending, 0)
      LIMIT ${PROBLEMS_MAX}`,
  )
  return result.rows.map(
    (row) => `account ${row.id}: stored totals (dp/dP/cp/cP) ${row.stored} but its transfers give ${row.expected}`,
  )
}

async function unbalancedCurrencies(db: Queryable): Promise<string[]> {
  const result = await db.query<{
    currency: string
    debits_posted: string
    credits_posted: string
    debits_pending: string
    credits_pending: string
  }>(
    `SELECT currency, sum(debits_posted)::text AS debits_posted, sum(credits_posted)::text AS credits_posted,
            sum(debits_pending)::text AS debits_pending, sum(credits_pending)::text AS credits_pending
       FROM ledger_accounts GROUP BY currency
     HAVING sum(debits_posted) <> sum(credits_posted) OR sum(debits_pending) <> sum(credits_pending)`,
  )
  return result.rows.map(
    (row) =>
      `${row.currency}: Σ debits posted ${row.debits_posted} vs Σ credits posted ${row.credits_posted}; Σ debits pending ${row.debits_pending} vs Σ credits pending ${row.credits_pending}`,
  )
}

async function accountsBreakingTheirFlags(db: Queryable): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM ledger_accounts
      WHERE (debits_must_not_exceed_credits AND debits_pending + debits_posted > credits_posted)
         OR (credits_must_not_exceed_debits AND credits_pending + credits_posted > debits_posted)
      LIMIT ${PROBLEMS_MAX}`,
  )
  return result.rows.map((row) => `account ${row.id} breaks its balance flag`)
}

async function transfersAcrossCurrencies(db: Queryable): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT t.id FROM ledger_transfers t
       JOIN ledger_accounts d ON d.id = t.debit_account_id
       JOIN ledger_accounts c ON c.id = t.credit_account_id
      WHERE d.currency <> t.currency OR c.currency <> t.currency
      LIMIT ${PROBLEMS_MAX}`,
  )
  return result.rows.map((row) => `transfer ${row.id} moves a currency its accounts do not hold`)
}

async function pendingStatesWithoutTheirResolution(db: Queryable): Promise<string[]> {
  const result = await db.query<{ transfer_id: string; status: string }>(
    `SELECT p.transfer_id, p.status FROM ledger_pending_transfers p
       LEFT JOIN ledger_transfers r ON r.pending_id = p.transfer_id
      WHERE (p.status = 'pending' AND r.id IS NOT NULL)
         OR (p.status <> 'pending' AND (r.id IS NULL OR r.id <> p.resolved_by OR (p.status = 'posted') <> (r.phase = 'post')))
      LIMIT ${PROBLEMS_MAX}`,
  )
  return result.rows.map(
    (row) => `pending transfer ${row.transfer_id} is ${row.status} but its resolution says otherwise`,
  )
}
