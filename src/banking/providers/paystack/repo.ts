// SQL of the Paystack adapter: the transfer recipients it keeps (one per beneficiary account), and
// nothing else (what it keeps of a dedicated account is the providers module's: provider_accounts).
import type { Queryable } from '../../../platform/db.ts'

export interface RecipientKey {
  provider: string
  bankCode: string
  accountNumber: string
}

export async function selectRecipientCode(db: Queryable, key: RecipientKey): Promise<string | undefined> {
  const { rows } = await db.query<{ recipient_code: string }>(
    'SELECT recipient_code FROM provider_recipients WHERE provider = $1 AND bank_code = $2 AND account_number = $3',
    [key.provider, key.bankCode, key.accountNumber],
  )
  return rows[0]?.recipient_code
}

/**
 * Keeps a recipient, then reads the one kept: two payouts to the same account racing both make a
 * recipient (Paystack answers the same one for the same details), and the first kept is used.
 */
export async function keepRecipientCode(db: Queryable, key: RecipientKey, recipientCode: string): Promise<string> {
  await db.query(
    `INSERT INTO provider_recipients (provider, bank_code, account_number, recipient_code) VALUES ($1, $2, $3, $4)
     ON CONFLICT (provider, bank_code, account_number) DO NOTHING`,
    [key.provider, key.bankCode, key.accountNumber, recipientCode],
  )
  const kept = await selectRecipientCode(db, key)
  if (kept === undefined)
    throw new Error(`the recipient of ${key.bankCode}:${key.accountNumber} was kept and is not there`)
  return kept
}
