// A statement's lines: the ledger's lines of the account (the ledger is the truth, docs/statements.md),
// each with what the partner knows of the object behind it — a move's or payout's reference, an
// escrow's ref, a narration, a payout's origin — asked of the object's owner by id, one look-up per
// kind of object on the page (primary-key probes).
import { creditNarrations } from '../collections/credits/service.ts'
import { escrowRefs } from '../escrow/service.ts'
import { accountLines, type LedgerLine } from '../ledger/service.ts'
import { payoutStatementFacts } from '../money-out/outbound/service.ts'
import type { Queryable } from '../platform/db.ts'
import { moveStatementFacts } from '../wallets/service.ts'

// A source id is looked up only when it is a uuid: a line is never refused for its source's id.
const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

export interface LineRow extends LedgerLine {
  /** A payout's origin (partner, refund, escrow, settlement); null for any other line. */
  originType: string | null
  /** The handle the partner knows the object by, where it is not its id: a move's or payout's reference, an escrow's ref. */
  objectReference: string | null
  narration: string | null
}

interface ObjectFacts {
  originType?: string | null
  objectReference?: string | null
  narration?: string | null
}

/** The account's lines with `lowest` <= sequence <= `highest`, newest first, at most `limit`, each with its object's facts. */
export async function selectLines(
  db: Queryable,
  accountId: string,
  lowest: number,
  highest: number,
  limit: number,
): Promise<LineRow[]> {
  const lines = await accountLines(db, accountId, lowest, highest, limit)
  const facts = await objectFacts(db, lines)
  return lines.map((line) => {
    const known =
      (line.sourceType !== null && line.sourceId !== null && facts.get(`${line.sourceType}:${line.sourceId}`)) || {}
    return {
      ...line,
      originType: known.originType ?? null,
      objectReference: known.objectReference ?? null,
      narration: known.narration ?? null,
    }
  })
}

/** The facts of the objects behind the lines, by `type:id`, each kind asked of its owner. */
async function objectFacts(db: Queryable, lines: readonly LedgerLine[]): Promise<Map<string, ObjectFacts>> {
  const idsOf = (type: string) => [
    ...new Set(
      lines.flatMap((line) =>
        line.sourceType === type && line.sourceId !== null && UUID_TEXT.test(line.sourceId) ? [line.sourceId] : [],
      ),
    ),
  ]
  const facts = new Map<string, ObjectFacts>()
  const lookups: [string, (ids: string[]) => Promise<{ id: string; facts: ObjectFacts }[]>][] = [
    [
      'outbound_transfer',
      async (ids) =>
        (await payoutStatementFacts(db, ids)).map((o) => ({
          id: o.id,
          facts: { originType: o.originType, objectReference: o.clientReference, narration: o.narration },
        })),
    ],
    [
      'wallet_move',
      async (ids) =>
        (await moveStatementFacts(db, ids)).map((m) => ({
          id: m.id,
          facts: { objectReference: m.reference, narration: m.narration },
        })),
    ],
    [
      'inbound_credit',
      async (ids) => (await creditNarrations(db, ids)).map((c) => ({ id: c.id, facts: { narration: c.narration } })),
    ],
    [
      'escrow',
      async (ids) => (await escrowRefs(db, ids)).map((e) => ({ id: e.id, facts: { objectReference: e.ref } })),
    ],
  ]
  for (const [type, lookup] of lookups) {
    const ids = idsOf(type)
    if (ids.length === 0) continue
    for (const found of await lookup(ids)) facts.set(`${type}:${found.id}`, found.facts)
  }
  return facts
}
