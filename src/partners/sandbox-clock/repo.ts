// The sandbox_clocks table: one row per sandbox partner that has moved its clock.
import type { Queryable } from '../../platform/db.ts'

/** The partner's offset in seconds; 0 when it never moved its clock. */
export async function selectOffsetSeconds(db: Queryable, partnerId: string): Promise<number> {
  const { rows } = await db.query<{ offset_seconds: string }>(
    `SELECT offset_seconds FROM sandbox_clocks WHERE partner_id = $1`,
    [partnerId],
  )
  return rows[0] ? Number(rows[0].offset_seconds) : 0
}

/** The furthest any partner's clock is ahead of real time, in seconds; 0 when none moved. */
export async function selectFurthestOffsetSeconds(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ offset_seconds: string }>(
    `SELECT coalesce(max(offset_seconds), 0) AS offset_seconds FROM sandbox_clocks`,
  )
  return Number(rows[0]!.offset_seconds)
}

/**
 * Adds `seconds` to the partner's offset, unless that would take it past `maxOffsetSeconds`;
 * answers the new offset, or undefined when it was refused (nothing changed).
 */
export async function addOffset(
  db: Queryable,
  partnerId: string,
  seconds: number,
  maxOffsetSeconds: number,
  at: Date,
): Promise<number | undefined> {
  const { rows } = await db.query<{ offset_seconds: string }>(
    `INSERT INTO sandbox_clocks AS c (partner_id, offset_seconds, advanced_at) SELECT $1::uuid, $2::bigint, $4::timestamptz WHERE $2::bigint <= $3::bigint
     ON CONFLICT (partner_id) DO UPDATE SET offset_seconds = c.offset_seconds + excluded.offset_seconds, advanced_at = excluded.advanced_at
       WHERE c.offset_seconds + excluded.offset_seconds <= $3::bigint
     RETURNING offset_seconds`,
    [partnerId, seconds, maxOffsetSeconds, at],
  )
  return rows[0] ? Number(rows[0].offset_seconds) : undefined
}
