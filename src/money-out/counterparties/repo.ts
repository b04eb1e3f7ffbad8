// SQL of counterparties.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'

export interface Counterparty {
  id: string
  partnerId: string
  bankCode: string
  accountNumber: string
  accountName: string
  verifiedAccountName: string | null
  name: string
  archived: boolean
  createdAt: Date
  updatedAt: Date
  lastUsedAt: Date | null
}

const COLUMNS = camelColumns(
  'id, partner_id, bank_code, account_number, account_name, verified_account_name, name, archived, created_at, updated_at, last_used_at',
)

const { one, all } = rowReaders((row: Counterparty) => row)

export interface NewCounterparty {
  id: string
  partnerId: string
  bankCode: string
  accountNumber: string
  accountName: string
  name: string
}

/** Saves the account once per partner; a later save of the same account returns the saved one (marked used when `used`). */
export async function upsertCounterparty(
  db: Queryable,
  counterparty: NewCounterparty,
  used: boolean,
): Promise<{ counterparty: Counterparty; created: boolean }> {
  const { rows } = await db.query<Counterparty & { created: boolean }>(
    `INSERT INTO counterparties (id, partner_id, bank_code, account_number, account_name, name, last_used_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 THEN now() END)
     ON CONFLICT (partner_id, bank_code, account_number)
       DO UPDATE SET last_used_at = CASE WHEN $7 THEN now() ELSE counterparties.last_used_at END
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    [
      counterparty.id,
      counterparty.partnerId,
      counterparty.bankCode,
      counterparty.accountNumber,
      counterparty.accountName,
      counterparty.name,
      used,
    ],
  )
  return { counterparty: rows[0]!, created: rows[0]!.created }
}

/** Saves many used accounts in one statement (each account once: the caller de-duplicates). */
export async function upsertUsedMany(db: Queryable, counterparties: readonly NewCounterparty[]): Promise<void> {
  if (counterparties.length === 0) return
  await db.query(
    `INSERT INTO counterparties (id, partner_id, bank_code, account_number, account_name, name, last_used_at)
     SELECT id, partner_id, bank_code, account_number, account_name, name, now()
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(id, partner_id, bank_code, account_number, account_name, name)
     ON CONFLICT (partner_id, bank_code, account_number) DO UPDATE SET last_used_at = now()`,
    [
      counterparties.map((item) => item.id),
      counterparties.map((item) => item.partnerId),
      counterparties.map((item) => item.bankCode),
      counterparties.map((item) => item.accountNumber),
      counterparties.map((item) => item.accountName),
      counterparties.map((item) => item.name),
    ],
  )
}

export async function selectCounterparty(
  db: Queryable,
  partnerId: string,
  id: string,
): Promise<Counterparty | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM counterparties WHERE id = $1 AND partner_id = $2`, [id, partnerId])
}

export async function selectCounterparties(
  db: Queryable,
  filter: { partnerId: string; archived?: boolean; beforeId?: string; limit: number },
): Promise<Counterparty[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM counterparties
      WHERE partner_id = $1 AND ($2::boolean IS NULL OR archived = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.partnerId, filter.archived ?? null, filter.beforeId ?? null, filter.limit],
  )
}

export async function updateCounterparty(
  db: Queryable,
  partnerId: string,
  id: string,
  change: { name?: string; archived?: boolean },
): Promise<Counterparty | undefined> {
  return one(
    db,
    `UPDATE counterparties SET name = coalesce($3, name), archived = coalesce($4, archived), updated_at = now()
      WHERE id = $1 AND partner_id = $2 RETURNING ${COLUMNS}`,
    [id, partnerId, change.name ?? null, change.archived ?? null],
  )
}

export async function updateVerifiedName(
  db: Queryable,
  partnerId: string,
  bankCode: string,
  accountNumber: string,
  verifiedAccountName: string,
): Promise<void> {
  await db.query(
    `UPDATE counterparties SET verified_account_name = $4, updated_at = now() WHERE partner_id = $1 AND bank_code = $2 AND account_number = $3`,
    [partnerId, bankCode, accountNumber, verifiedAccountName],
  )
}
