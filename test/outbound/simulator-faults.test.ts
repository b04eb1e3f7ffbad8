// The settlement simulator when the sandbox bank's answer is lost or fails (issue 31's fault
// campaign found 500s): the bank's fault is answered 502 provider_unavailable in the error shape,
// Rail changes nothing, and asking again once the bank answers settles the transfer.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { writeFaults, type Faults } from '../../src/sandbox/faults.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { fundFloat } from '../support/float.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'

const SECRET = 'simulator-faults-secret'
const PROVIDER_TIMEOUT_MS = 1_000
/** Far off: the transfer stays submitted however long the faults last. */
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } }
const NO_FAULTS: Faults = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }
const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}

let app: Rail

// The workers take the app's provider timeout and payment settings.
beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: SECRET,
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    payments: SCHEDULE,
    workers: true,
  })
})
afterEach(async () => {
  await writeFaults(app.db.pool, NO_FAULTS)
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

const read = async (client: RailClient, id: string) =>
  (await client.get<{ state: string }>(`/api/v1/rail/outbound/${id}`)).body

async function submitted(client: RailClient): Promise<string> {
  const response = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo: 100_000,
    ...BENEFICIARY,
  })
  expect(response.status).toBe(202)
  await waitFor(async () => (await read(client, response.body.id)).state === 'submitted', 10_000, 'submitted')
  return response.body.id
}

describe('POST /api/v1/rail/sandbox/simulate-outbound-settlement when the bank fails', () => {
  // registered: whether the bank did the work before its answer was lost.
  const FAULTS: [string, Partial<Faults>, boolean][] = [
    ['its answer is lost', { lostResponseRate: 1 }, true],
    ['it answers 500', { errorRate: 1 }, false],
    ['it does not answer', { noAnswerRate: 1 }, false],
  ]
  it.each(FAULTS)(
    '%s: 502 provider_unavailable in the error shape, Rail changes nothing; asked again, the transfer settles',
    async (_name, fault, registered) => {
      const partner = await app.newPartner()
      expect((await fundFloat(partner.client, 1_000_000)).status).toBe(200)
      const id = await submitted(partner.client)

      await writeFaults(app.db.pool, { ...NO_FAULTS, ...fault })
      const refused = await partner.client.post<{ error: string; message: string }>(
        '/api/v1/rail/sandbox/simulate-outbound-settlement',
        { transferId: id, outcome: 'confirmed' },
      )
      await writeFaults(app.db.pool, NO_FAULTS)
      expect(refused.status).toBe(502)
      expect(refused.body).toEqual(
        expect.objectContaining({ error: 'provider_unavailable', message: expect.stringContaining('nothing changed') }),
      )
      // Unregistered at the bank, the transfer stays submitted; registered (the answer lost), its
      // scheduled requery may already have settled it.
      expect(registered ? ['submitted', 'confirmed'] : ['submitted']).toContain((await read(partner.client, id)).state)

      const again = await partner.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
        transferId: id,
        outcome: 'confirmed',
      })
      expect(registered ? [200, 409] : [200]).toContain(again.status)
      await waitFor(async () => (await read(partner.client, id)).state === 'confirmed', 15_000, 'confirmed')
    },
  )
})
