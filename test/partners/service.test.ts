// Credentials at rest: secrets sealed under the master key, API keys only as hashes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createPartner,
  currentCallbackSecret,
  findSigningKey,
  rotateCallbackSecret,
} from '../../src/partners/service.ts'
import { RailError } from '../../src/platform/errors.ts'
import { randomBytes } from 'node:crypto'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
const masterKey = randomBytes(32)

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => db?.drop())

describe('partner credentials', () => {
  it('stores no secret in clear and keeps only a hash and a prefix of the API key', async () => {
    const created = await createPartner(db.pool, masterKey, {
      name: 'Acme',
      customerClass: 'corporate',
      environment: 'sandbox',
    })
    expect(created.escrowApiKey).toMatch(/^rk_test_[0-9A-Za-z]{40}$/)
    expect(created.callbackSigningSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const dump = await db.pool.query(
      `SELECT row_to_json(c)::text AS text, encode(secret_sealed, 'escape') AS sealed FROM partner_credentials c WHERE partner_id = $1`,
      [created.partnerId],
    )
    const everything = dump.rows.map((row) => `${row.text} ${row.sealed ?? ''}`).join('\n')
    for (const secret of [created.signingSecret, created.escrowApiKey, created.callbackSigningSecret])
      expect(everything).not.toContain(secret)
    const prefix = await db.pool.query(
      `SELECT api_key_prefix FROM partner_credentials WHERE partner_id = $1 AND kind = 'escrow_api_key'`,
      [created.partnerId],
    )
    expect(prefix.rows[0].api_key_prefix).toBe(created.escrowApiKey.slice(0, 12))
  })

  it('live partners get rk_live_ keys', async () => {
    const created = await createPartner(db.pool, masterKey, {
      name: 'Live Co',
      customerClass: 'government',
      environment: 'live',
    })
    expect(created.escrowApiKey).toMatch(/^rk_live_/)
    expect(created.keyId).toMatch(/^rk_kid_live_/)
  })

  it('a secret sealed under one master key does not open under another', async () => {
    const created = await createPartner(db.pool, masterKey, {
      name: 'Acme',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    expect((await findSigningKey(db.pool, masterKey, created.keyId))?.signingSecret).toBe(created.signingSecret)
    await expect(findSigningKey(db.pool, randomBytes(32), created.keyId)).rejects.toThrow()
  })

  it('a sealed secret moved onto another row does not open (bound to its row id)', async () => {
    const a = await createPartner(db.pool, masterKey, { name: 'A', customerClass: 'fintech', environment: 'sandbox' })
    const b = await createPartner(db.pool, masterKey, { name: 'B', customerClass: 'fintech', environment: 'sandbox' })
    await db.pool.query(
      `UPDATE partner_credentials SET secret_sealed = (SELECT secret_sealed FROM partner_credentials WHERE key_id = $1) WHERE key_id = $2`,
      [a.keyId, b.keyId],
    )
    await expect(findSigningKey(db.pool, masterKey, b.keyId)).rejects.toThrow()
  })

  it('callbacks are signed with the newest callback secret after a rotation', async () => {
    const created = await createPartner(db.pool, masterKey, {
      name: 'C',
      customerClass: 'citizen',
      environment: 'sandbox',
    })
    expect(await currentCallbackSecret(db.pool, masterKey, created.partnerId)).toBe(created.callbackSigningSecret)
    const rotated = await rotateCallbackSecret(db.pool, masterKey, created.partnerId)
    expect(await currentCallbackSecret(db.pool, masterKey, created.partnerId)).toBe(
      rotated.issued.callbackSigningSecret,
    )
  })

  it.each([
    [{ name: '', customerClass: 'fintech', environment: 'sandbox' }],
    [{ name: 'X', customerClass: 'bank', environment: 'sandbox' }],
    [{ name: 'X', customerClass: 'fintech', environment: 'prod' }],
  ])('refuses bad partner input %j', async (input) => {
    await expect(createPartner(db.pool, masterKey, input as never)).rejects.toBeInstanceOf(RailError)
  })

  it('rotating an unknown partner is not_found, and a bad overlap is refused', async () => {
    await expect(
      rotateCallbackSecret(db.pool, masterKey, '00000000-0000-7000-8000-000000000000'),
    ).rejects.toMatchObject({ code: 'not_found' })
    const created = await createPartner(db.pool, masterKey, {
      name: 'D',
      customerClass: 'citizen',
      environment: 'sandbox',
    })
    await expect(rotateCallbackSecret(db.pool, masterKey, created.partnerId, -1)).rejects.toMatchObject({
      code: 'validation_error',
    })
  })
})
