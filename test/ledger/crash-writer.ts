// The process test/ledger/crash.test.ts kills: 32 concurrent callers move money between the given
// accounts through the ledger batcher (every fifth request a linked pair, both legs naming the
// pair as their source) and print the id of each transfer the ledger acknowledged as made, one
// per line, until the process is killed.
import { randomUUID } from 'node:crypto'
import { LedgerBatcher } from '../../bench/ledger-batcher.ts'
import type { TransferInput } from '../../src/ledger/service.ts'
import { createPool } from '../../src/platform/db.ts'

const [databaseUrl, ...accounts] = process.argv.slice(2)
const pool = createPool(databaseUrl!, 4)
const batcher = new LedgerBatcher(pool, { lanes: 2 })

function move(pairId?: string): TransferInput {
  const debit = accounts[Math.floor(Math.random() * accounts.length)]!
  let credit = debit
  while (credit === debit) credit = accounts[Math.floor(Math.random() * accounts.length)]!
  const transfer: TransferInput = {
    id: randomUUID(),
    debitAccountId: debit,
    creditAccountId: credit,
    amountKobo: 1 + Math.floor(Math.random() * 1_000),
    currency: 'NGN',
    code: 'crash_move',
  }
  return pairId === undefined ? transfer : { ...transfer, sourceType: 'crash_pair', sourceId: pairId }
}

async function caller(): Promise<never> {
  for (;;) {
    const linked = Math.random() < 0.2
    const pairId = randomUUID()
    const transfers = linked ? [move(pairId), move(pairId)] : [move()]
    const results = await batcher.createTransfers(transfers, { linked })
    for (const outcome of results) if (outcome.result === 'ok') process.stdout.write(`${outcome.id}\n`)
  }
}

await Promise.all(Array.from({ length: 32 }, caller))
