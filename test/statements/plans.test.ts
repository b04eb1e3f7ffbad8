// Statements stay cheap on an account with a long history: a page, a range's bounds and an empty
// page's balance read a page's worth of index and heap, never the account's whole history, with the
// plans PostgreSQL makes for Rail's prepared statements (custom and generic).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTransfers } from '../../src/ledger/service.ts'
import { BOOKED_AT_SQL, LINES_SQL, RANGE_SQL } from '../../src/ledger/lines-repo.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { newAccount } from '../support/ledger.ts'

const LINES = 30_000
let db: TestDatabase
let account: string
let middle: Date

beforeAll(async () => {
  db = await createTestDatabase(2)
  const source = await newAccount(db.pool)
  const other = await newAccount(db.pool)
  account = await newAccount(db.pool)
  // Lines on both sides of the account, in batches (each batch one transaction, one created_at).
  for (let batch = 0; batch < LINES / 1_000; batch++) {
    const transfers = Array.from({ length: 1_000 }, (_, i) =>
      i % 3 === 0
        ? {
            id: randomUUID(),
            debitAccountId: account,
            creditAccountId: other,
            amountKobo: 1,
            currency: 'NGN',
            code: 'test_funding',
          }
        : {
            id: randomUUID(),
            debitAccountId: source,
            creditAccountId: account,
            amountKobo: 2,
            currency: 'NGN',
            code: 'test_funding',
          },
    )
    await createTransfers(db.pool, transfers)
    if (batch === LINES / 2_000) middle = new Date()
  }
  await db.pool.query('ANALYZE ledger_transfers')
}, 120_000)
afterAll(async () => db?.drop())

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
  Plans?: PlanNode[]
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

async function explain(
  sql: string,
  types: string,
  values: string,
  mode: 'force_custom_plan' | 'force_generic_plan',
): Promise<PlanNode> {
  const client = await db.pool.connect()
  try {
    await client.query(`SET plan_cache_mode = ${mode}`)
    await client.query(`PREPARE statement_under_test(${types}) AS ${sql}`)
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE statement_under_test(${values})`,
    )
    return rows[0]!['QUERY PLAN'][0].Plan
  } finally {
    await client.query('DEALLOCATE ALL; RESET plan_cache_mode')
    client.release()
  }
}

/** Index probes only: no scan or sort of ledger_transfers, and a few dozen blocks where the history spans hundreds. */
function expectPageSized(plan: PlanNode): void {
  const all = nodes(plan)
  expect(
    all
      .filter((node) => node['Relation Name'] === 'ledger_transfers' && !node['Node Type'].startsWith('Index'))
      .map((node) => node['Node Type']),
  ).toEqual([])
  expect(all.filter((node) => node['Node Type'] === 'Sort')).toEqual([])
  expect(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']).toBeLessThan(120)
}

describe.each(['force_custom_plan', 'force_generic_plan'] as const)('with %s', (mode) => {
  it('a page of the newest lines, and one deep in the history', async () => {
    expectPageSized(
      await explain(LINES_SQL, 'uuid, bigint, bigint, int', `'${account}', 0, 9007199254740991, 51`, mode),
    )
    expectPageSized(await explain(LINES_SQL, 'uuid, bigint, bigint, int', `'${account}', 0, ${LINES / 2}, 51`, mode))
  })

  it("a range's bounds", async () => {
    expectPageSized(
      await explain(
        RANGE_SQL,
        'uuid, timestamptz, timestamptz',
        `'${account}', '${middle.toISOString()}', '${middle.toISOString()}'`,
        mode,
      ),
    )
  })

  it("an empty page's balance", async () => {
    expectPageSized(await explain(BOOKED_AT_SQL, 'uuid, bigint', `'${account}', ${LINES / 3}`, mode))
  })
})
