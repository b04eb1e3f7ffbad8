// SQL of the partner's registered escrow webhook.
import type { Queryable } from '../platform/db.ts'

export interface EscrowWebhook {
  partnerId: string
  url: string
  secretSealed: Buffer | null
}

/**
 * Registers or updates the partner's escrow webhook. `secretSealed` undefined keeps the stored
 * secret; null removes it.
 */
export async function upsertWebhook(
  db: Queryable,
  partnerId: string,
  url: string,
  secretSealed: Buffer | null | undefined,
): Promise<EscrowWebhook> {
  const { rows } = await db.query<{ partner_id: string; url: string; secret_sealed: Buffer | null }>(
    `INSERT INTO escrow_webhooks (partner_id, url, secret_sealed) VALUES ($1, $2, $3)
     ON CONFLICT (partner_id) DO UPDATE
       SET url = EXCLUDED.url,
           secret_sealed = CASE WHEN $4 THEN escrow_webhooks.secret_sealed ELSE EXCLUDED.secret_sealed END,
           updated_at = now()
     RETURNING partner_id, url, secret_sealed`,
    [partnerId, url, secretSealed ?? null, secretSealed === undefined],
  )
  const row = rows[0]!
  return { partnerId: row.partner_id, url: row.url, secretSealed: row.secret_sealed }
}

export async function selectWebhook(db: Queryable, partnerId: string): Promise<EscrowWebhook | undefined> {
  const { rows } = await db.query<{ partner_id: string; url: string; secret_sealed: Buffer | null }>(
    `SELECT partner_id, url, secret_sealed FROM escrow_webhooks WHERE partner_id = $1`,
    [partnerId],
  )
  const row = rows[0]
  return row && { partnerId: row.partner_id, url: row.url, secretSealed: row.secret_sealed }
}
