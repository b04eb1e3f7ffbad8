// Counterparties: saved on the first payout to an account (with the bank's verified name), or
// explicitly; listed; renamed and archived (soft state); another partner's is 404.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import { fundFloat } from '../support/float.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'counterparties-test-secret'
let app: Rail

beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET, workers: true })
})
afterAll(() => app?.close())

type CounterpartyJson = Schemas['Counterparty']

describe('counterparties', () => {
  it('the first payout to an account saves it, once, with the name the bank gave', async () => {
    const { client } = await app.newPartner()
    await fundFloat(client, 100_000)
    const holder = syntheticAccountName('058', nuban('058', '555666777')) // the name the bank answers
    const account = {
      beneficiaryAccountNumber: nuban('058', '555666777'),
      beneficiaryBankCode: '058',
      beneficiaryAccountName: holder,
      currency: 'NGN',
    }
    for (let i = 0; i < 2; i++)
      expect(
        (await client.post('/api/v1/rail/outbound', { clientReference: randomUUID(), amountKobo: 1_000, ...account }))
          .status,
      ).toBe(202)
    await waitFor(
      async () =>
        (await client.get<{ data: CounterpartyJson[] }>('/api/v1/rail/counterparties')).body.data[0]
          ?.verifiedAccountName != null,
    )
    const list = (await client.get<{ data: CounterpartyJson[] }>('/api/v1/rail/counterparties')).body.data
    expect(list).toHaveLength(1)
    expect(list[0]).toEqual(
      expect.objectContaining({
        accountNumber: account.beneficiaryAccountNumber,
        bankCode: '058',
        bankName: expect.any(String),
        accountName: holder,
        name: holder,
        archived: false,
        lastUsedAt: expect.any(String),
      }),
    )
  })

  it('is created explicitly (201, then 200 for the same account), renamed and archived', async () => {
    const { client } = await app.newPartner()
    const body = { accountNumber: nuban('033', '111222333'), bankCode: '033', accountName: 'Bola Ade' }
    const created = await client.post<CounterpartyJson>('/api/v1/rail/counterparties', body)
    expect(created.status).toBe(201)
    expect((await client.post<CounterpartyJson>('/api/v1/rail/counterparties', body)).status).toBe(200)
    const renamed = await client.patch<CounterpartyJson>(`/api/v1/rail/counterparties/${created.body.id}`, {
      name: 'Bola (supplier)',
    })
    expect(renamed.status).toBe(200)
    expect(renamed.body.name).toBe('Bola (supplier)')
    const archived = await client.patch<CounterpartyJson>(`/api/v1/rail/counterparties/${created.body.id}`, {
      archived: true,
    })
    expect(archived.body).toEqual(
      expect.objectContaining({ archived: true, name: 'Bola (supplier)', accountName: 'Bola Ade' }),
    )
    // Lists show a row once the transactions begun before it have ended (docs/api.md, pagination):
    // on a busy machine a worker's transaction may still be open a moment after the create.
    const listedArchived = async () =>
      (await client.get<{ data: CounterpartyJson[] }>('/api/v1/rail/counterparties?archived=true')).body.data
    await waitFor(async () => (await listedArchived()).length > 0, 20_000, 'the archived counterparty listed')
    expect(await listedArchived()).toHaveLength(1)
    expect(
      (await client.get<{ data: CounterpartyJson[] }>('/api/v1/rail/counterparties?archived=false')).body.data,
    ).toHaveLength(0)
    expect((await client.get<CounterpartyJson>(`/api/v1/rail/counterparties/${created.body.id}`)).body.archived).toBe(
      true,
    )
  })

  it("another partner's counterparty is 404, and bad input is 422", async () => {
    const owner = await app.newPartner()
    const other = await app.newPartner()
    const created = (
      await owner.client.post<CounterpartyJson>('/api/v1/rail/counterparties', {
        accountNumber: nuban('058', '999888777'),
        bankCode: '058',
        accountName: 'Owner',
      })
    ).body
    expect((await other.client.get(`/api/v1/rail/counterparties/${created.id}`)).status).toBe(404)
    expect((await other.client.patch(`/api/v1/rail/counterparties/${created.id}`, { archived: true })).status).toBe(404)
    expect((await owner.client.get<CounterpartyJson>(`/api/v1/rail/counterparties/${created.id}`)).body.archived).toBe(
      false,
    )
    for (const body of [{}, { colour: 'red' }, { name: '' }, { name: 'n'.repeat(101) }, { archived: 'yes' }]) {
      expect((await owner.client.patch(`/api/v1/rail/counterparties/${created.id}`, body)).status).toBe(422)
    }
    expect((await owner.client.patch('/api/v1/rail/counterparties/not-a-uuid', { archived: true })).status).toBe(422)
    expect(
      (
        await owner.client.post('/api/v1/rail/counterparties', {
          accountNumber: '1234567890',
          bankCode: '058',
          accountName: 'X',
        })
      ).status,
    ).toBe(422)
    expect(
      (
        await owner.client.post('/api/v1/rail/counterparties', {
          accountNumber: nuban('058', '123123123'),
          bankCode: '999',
          accountName: 'X',
        })
      ).status,
    ).toBe(422)
  })

  it.each([
    ['missing accountName', { accountNumber: nuban('058', '100200300'), bankCode: '058' }],
    ['a numeric account number', { accountNumber: 1234567890, bankCode: '058', accountName: 'X' }],
    ['an unknown field', { accountNumber: nuban('058', '100200300'), bankCode: '058', accountName: 'X', bvn: '123' }],
    [
      'an oversize name',
      { accountNumber: nuban('058', '100200300'), bankCode: '058', accountName: 'X', name: 'n'.repeat(101) },
    ],
  ])('POST refuses %s with 422 and saves nothing', async (_what, body) => {
    const { client } = await app.newPartner()
    expect((await client.post('/api/v1/rail/counterparties', body)).status).toBe(422)
    expect((await client.get<{ data: CounterpartyJson[] }>('/api/v1/rail/counterparties')).body.data).toEqual([])
  })

  it.each(['?limit=0', '?limit=101', '?archived=maybe', '?cursor=nope', '?colour=red'])(
    'GET list refuses %s with 422',
    async (query) => {
      const { client } = await app.newPartner()
      expect((await client.get(`/api/v1/rail/counterparties${query}`)).status).toBe(422)
    },
  )
})
