// Every state machine (src/<domain>/states.ts) is the table the database enforces (migration
// 0036): the two tables are the same, each machine's column carries its trigger and allows exactly
// its states, and, machine by machine, every allowed move succeeds and every other change of state
// (out of a terminal state, back to NULL, to an unknown or skipped state) is refused with RS001.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { disbursementStates, escrowRefundStates, escrowStates } from '../../src/escrow/states.ts'
import { deliveryStates, eventDeliveryStates } from '../../src/events/states.ts'
import { creditStates } from '../../src/collections/credits/states.ts'
import { invoiceStates } from '../../src/invoices/states.ts'
import { outboundStates } from '../../src/money-out/outbound/states.ts'
import { intentStates } from '../../src/collections/intents/states.ts'
import { instructionStates } from '../../src/money-out/pipeline/states.ts'
import type { StateMachine } from '../../src/platform/state-machine.ts'
import { refundStates } from '../../src/money-out/refunds/states.ts'
import { settlementStates } from '../../src/settlement/states.ts'
import { virtualAccountStates } from '../../src/collections/virtual-accounts/states.ts'
import { walletMoveStates } from '../../src/wallets/states.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

const MACHINES: StateMachine<string>[] = [
  walletMoveStates,
  outboundStates,
  instructionStates,
  refundStates,
  settlementStates,
  escrowStates,
  disbursementStates,
  escrowRefundStates,
  invoiceStates,
  intentStates,
  creditStates,
  virtualAccountStates,
  deliveryStates,
  eventDeliveryStates,
]

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(async () => db?.drop())

const move = (machine: string, from: string | null, to: string) => `${machine}: ${from ?? 'NULL'} → ${to}`

it('the database holds exactly the moves of every states.ts', async () => {
  const { rows } = await db.pool.query<{ machine: string; from_state: string | null; to_state: string }>(
    `SELECT machine, from_state, to_state FROM state_transitions`,
  )
  const inSql = rows.map((row) => move(row.machine, row.from_state, row.to_state)).sort()
  const inTs = MACHINES.flatMap((machine) =>
    machine.transitions().map(([from, to]) => move(machine.name, from, to)),
  ).sort()
  expect(inSql).toEqual(inTs)
  expect(new Set(MACHINES.map((machine) => machine.name)).size).toBe(MACHINES.length)
})

it('each machine guards its column with the one trigger, and no trigger names a machine of no states.ts', async () => {
  const { rows } = await db.pool.query<{ def: string }>(
    `SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t WHERE t.tgfoid = 'refuse_state_transition'::regproc AND NOT t.tgisinternal`,
  )
  const guarded = rows
    .map((row) => {
      const found = /ON public\.(\w+) .*EXECUTE FUNCTION refuse_state_transition\('(\w+)', '(\w+)'\)/.exec(row.def)
      return found ? `${found[1]}.${found[3]} ${found[2]}` : row.def
    })
    .sort()
  expect(guarded).toEqual(MACHINES.map((machine) => `${machine.table}.${machine.column} ${machine.name}`).sort())
})

// Status columns no machine guards, and why (docs/states.md): the ledger guards its own (its
// facts trigger, `rail ledger verify`), the sandbox bank's accounts are a simulated bank's data, and
// an outbound transfer's state history is a record of the guarded column's changes, never changed,
// and the sandbox Monnify dialect's `announced_status` records which final status its webhook
// announced (a simulated provider's data, written once).
const NOT_GUARDED = [
  'public.ledger_accounts.status',
  'public.ledger_pending_transfers.status',
  'public.outbound_transfer_states.state',
  'sandbox_bank.accounts.status',
  'sandbox_bank.monnify_disbursements.announced_status',
]

it('every status or state column is a machine, or named above as not guarded', async () => {
  const { rows } = await db.pool.query<{ name: string }>(
    `SELECT table_schema || '.' || table_name || '.' || column_name AS name FROM information_schema.columns
      WHERE table_schema IN ('public', 'sandbox_bank') AND table_name <> 'state_transitions' AND data_type = 'text' AND column_name ~ '(^|_)(status|state)$'`,
  )
  const machines = MACHINES.map((machine) => `public.${machine.table}.${machine.column}`)
  expect(rows.map((row) => row.name).sort()).toEqual([...machines, ...NOT_GUARDED].sort())
})

it("each machine's states are exactly those its column's CHECK constraint allows", async () => {
  for (const machine of MACHINES) {
    const { rows } = await db.pool.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
      [machine.table],
    )
    const values = rows
      .map((row) => new RegExp(`^CHECK \\(\\(${machine.column} = ANY \\(ARRAY\\[(.*)\\]\\)\\)\\)$`).exec(row.def))
      .find((found) => found !== null)
    expect(values, `${machine.table}.${machine.column} has a CHECK of its values`).toBeDefined()
    const allowed = [...values![1]!.matchAll(/'([a-z_]+)'::text/g)].map((found) => found[1])
    expect(allowed.sort(), machine.name).toEqual([...machine.states].sort())
  }
})

// The walk changes only the state column of rows that hold nothing else: the table's other row
// rules (NOT NULL, CHECK, foreign and unique keys) are dropped in this test's own database, so
// that a row can sit in any state and what allows or refuses each change is the machine's trigger.
const relaxed = new Set<string>()
async function relax(table: string): Promise<void> {
  if (relaxed.has(table)) return
  relaxed.add(table)
  await db.pool.query(`DO $$
    DECLARE c record;
    BEGIN
      FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = '${table}'::regclass AND contype IN ('c', 'f', 'u', 'x') LOOP
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', '${table}', c.conname);
      END LOOP;
      FOR c IN SELECT a.attname FROM pg_attribute a
                WHERE a.attrelid = '${table}'::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attnotnull AND a.attidentity = '' AND a.attgenerated = ''
                  AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indisprimary AND a.attnum = ANY (i.indkey)) LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I DROP NOT NULL', '${table}', c.attname);
      END LOOP;
    END $$`)
}

async function primaryKey(table: string): Promise<string> {
  const { rows } = await db.pool.query<{ name: string; type: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
      WHERE i.indrelid = $1::regclass AND i.indisprimary`,
    [table],
  )
  expect(rows.map((row) => row.type)).toEqual(['uuid'])
  return rows[0]!.name
}

// Each pair in one round trip per machine: a bare row in the first state, then its state changed
// to the second; the change's SQLSTATE and message when refused, the state it holds when made.
const TRY_CHANGES = `CREATE FUNCTION test_try_changes(tbl text, key text, col text, froms text[], tos text[])
  RETURNS TABLE (code text, message text, state text) LANGUAGE plpgsql AS $$
  DECLARE
    row_id uuid;
  BEGIN
    FOR n IN 1 .. coalesce(array_length(froms, 1), 0) LOOP
      EXECUTE format('INSERT INTO %I (%I, %I) VALUES (gen_random_uuid(), $1) RETURNING %I', tbl, key, col, key) INTO row_id USING froms[n];
      BEGIN
        EXECUTE format('UPDATE %I SET %I = $2 WHERE %I = $1 RETURNING %I', tbl, col, key, col) INTO state USING row_id, tos[n];
        code := NULL;
        message := NULL;
      EXCEPTION WHEN OTHERS THEN
        code := SQLSTATE;
        message := SQLERRM;
        state := NULL;
      END;
      RETURN NEXT;
    END LOOP;
  END $$`

type Pair = [from: string | null, to: string | null]
interface Outcome {
  code: string | null
  message: string | null
  state: string | null
}

async function tryChanges(machine: StateMachine<string>, key: string, pairs: readonly Pair[]): Promise<Outcome[]> {
  const { rows } = await db.pool.query<Outcome>(
    `SELECT code, message, state FROM test_try_changes($1, $2, $3, $4::text[], $5::text[])`,
    [machine.table, key, machine.column, pairs.map(([from]) => from), pairs.map(([, to]) => to)],
  )
  expect(rows).toHaveLength(pairs.length)
  return rows
}

beforeAll(async () => {
  await db.pool.query(TRY_CHANGES)
})

describe.each(MACHINES.map((machine) => [machine.name, machine] as const))('the %s machine', (_name, machine) => {
  let key: string
  beforeAll(async () => {
    await relax(machine.table)
    key = await primaryKey(machine.table)
  })

  it('allows every move of its table', async () => {
    const moves = machine.transitions()
    expect(moves.length).toBeGreaterThan(0)
    const outcomes = await tryChanges(machine, key, moves)
    moves.forEach(([from, to], n) =>
      expect(outcomes[n], move(machine.name, from, to)).toEqual({ code: null, message: null, state: to }),
    )
  })

  it('refuses every other change of state, and every change out of a terminal state', async () => {
    const allowed = new Set(machine.transitions().map(([from, to]) => move(machine.name, from, to)))
    const starts: (string | null)[] = machine.fromNull.length > 0 ? [null, ...machine.states] : [...machine.states]
    const targets: (string | null)[] = [...machine.states, null, 'not_a_state']
    const refused = starts.flatMap((from) =>
      targets
        .filter((to) => from !== to && !allowed.has(move(machine.name, from, to ?? 'NULL')))
        .map((to): Pair => [from, to]),
    )
    expect(refused.length).toBeGreaterThan(0)
    for (const terminal of machine.states.filter((state) => machine.isTerminal(state))) {
      expect(refused.filter(([from]) => from === terminal)).toHaveLength(targets.length - 1) // every change out of it
    }
    const outcomes = await tryChanges(machine, key, refused)
    refused.forEach(([from, to], n) => {
      const label = move(machine.name, from, to ?? 'NULL')
      expect(outcomes[n]!.code, label).toBe('RS001')
      expect(outcomes[n]!.message, label).toBe(
        `${machine.name}: ${machine.table}.${machine.column} ${from ?? 'NULL'} → ${to ?? 'NULL'} refused (not a move of its state machine)`,
      )
    })
  })

  it('leaves a state written again unchanged alone (no move, nothing checked)', async () => {
    const outcomes = await tryChanges(
      machine,
      key,
      machine.states.map((state): Pair => [state, state]),
    )
    machine.states.forEach((state, n) => expect(outcomes[n], state).toEqual({ code: null, message: null, state }))
  })
})
