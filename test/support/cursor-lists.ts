// The lists the cursor tests write to, each with how one row is made for a partner on a given
// connection: used by the test itself and by the writer processes it starts (cursor-writer.ts).
import * as counterparties from '../../src/money-out/counterparties/repo.ts'
import { recordEvent } from '../../src/events/service.ts'
import { systemClock } from '../../src/platform/clock.ts'
import type { Tx } from '../../src/platform/db.ts'
import { uuidv7 } from '../../src/platform/ids.ts'

export interface Lister {
  path: string
  /** Writes one row for the partner on this connection; returns its id. */
  write(db: Tx, partnerId: string, n: number): Promise<string>
}

export const LISTS: Record<string, Lister> = {
  events: {
    path: '/api/v1/rail/events',
    async write(db, partnerId, n) {
      return (
        await recordEvent(db, systemClock, {
          partnerId,
          type: 'test.cursor',
          objectType: 'test',
          objectId: `o${n}`,
          data: { n },
          recordOnly: true,
        })
      ).id
    },
  },
  counterparties: {
    path: '/api/v1/rail/counterparties',
    async write(db, partnerId, n) {
      // Unique per process and row: the process id and the row number make the account number.
      const accountNumber = String(1_000_000_000 + ((process.pid * 1_000 + n) % 9_000_000_000)).slice(0, 10)
      const account = { bankCode: '058', accountNumber, accountName: `Account ${n}` }
      return (
        await counterparties.upsertCounterparty(
          db,
          { id: uuidv7(), partnerId, ...account, name: account.accountName },
          false,
        )
      ).counterparty.id
    },
  },
}
