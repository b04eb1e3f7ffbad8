// The float: sandbox funding over HTTP and the CLI, each a balanced ledger transfer, and its balance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../support/app.ts'
import { runRail } from '../support/cli.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

type FloatJson = Schemas['Float']

describe('POST /api/v1/rail/sandbox/fund-float', () => {
  it('funds the float from the provider settlement account, once per reference', async () => {
    const { credentials, client } = await app.newPartner()
    expect((await client.get<FloatJson>('/api/v1/rail/float')).body).toEqual({
      partnerId: credentials.partnerId,
      currency: 'NGN',
      availableBalanceKobo: 0,
      bookedBalanceKobo: 0,
    })

    const funded = await client.post<{ transferId: string; amountKobo: number; float: FloatJson }>(
      '/api/v1/rail/sandbox/fund-float',
      { amountKobo: 500_000, reference: 'top-up-0' },
    )
    expect(funded.status).toBe(200)
    expect(funded.body.float).toEqual(
      expect.objectContaining({ availableBalanceKobo: 500_000, bookedBalanceKobo: 500_000 }),
    )

    const first = await client.post<{ transferId: string; float: FloatJson }>('/api/v1/rail/sandbox/fund-float', {
      amountKobo: 250_000,
      reference: 'top-up-1',
    })
    const again = await client.post<{ transferId: string; float: FloatJson }>('/api/v1/rail/sandbox/fund-float', {
      amountKobo: 250_000,
      reference: 'top-up-1',
    })
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.transferId).toBe(first.body.transferId)
    expect(again.body.float.availableBalanceKobo).toBe(750_000)

    const conflict = await client.post<{ error: string }>('/api/v1/rail/sandbox/fund-float', {
      amountKobo: 1,
      reference: 'top-up-1',
    })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toBe('idempotency_conflict')

    // The money came from the partner's provider settlement account: the ledger balances.
    const { rows } = await app.db.pool.query(
      `SELECT kind, credits_posted - debits_posted AS booked FROM ledger_accounts WHERE partner_id = $1 AND kind IN ('float', 'provider_settlement') ORDER BY kind`,
      [credentials.partnerId],
    )
    expect(rows).toEqual([
      { kind: 'float', booked: 750_000 },
      { kind: 'provider_settlement', booked: -750_000 },
    ])
    expect((await client.get<FloatJson>('/api/v1/rail/float')).body.availableBalanceKobo).toBe(750_000)
    await expectLedgerVerified(app.db.pool)
  })

  it('is 404 for live partners, and changes nothing', async () => {
    const { credentials, client } = await app.newPartner({ environment: 'live' })
    const response = await client.post<{ error: string }>('/api/v1/rail/sandbox/fund-float', {
      amountKobo: 1_000,
      reference: 'live-1',
    })
    expect(response.status).toBe(404)
    expect(response.body.error).toBe('not_found')
    const { rows } = await app.db.pool.query(`SELECT 1 FROM ledger_accounts WHERE partner_id = $1 AND kind = 'float'`, [
      credentials.partnerId,
    ])
    expect(rows).toHaveLength(0)
  })

  it.each([
    ['missing amount', {}],
    ['zero', { amountKobo: 0, reference: 'r' }],
    ['negative', { amountKobo: -5, reference: 'r' }],
    ['fractional', { amountKobo: 1.5, reference: 'r' }],
    ['a string', { amountKobo: '100', reference: 'r' }],
    ['beyond the safe integers', { amountKobo: Number.MAX_SAFE_INTEGER + 1, reference: 'r' }],
    ['an unknown field', { amountKobo: 100, reference: 'r', currency: 'NGN' }],
    ['no reference (a replayed request would fund again)', { amountKobo: 100 }],
    ['an empty reference', { amountKobo: 100, reference: '' }],
    ['an oversize reference', { amountKobo: 100, reference: 'r'.repeat(65) }],
  ])('refuses %s with 422 and moves nothing', async (_what, body) => {
    const { client } = await app.newPartner()
    const response = await client.post<{ error: string }>('/api/v1/rail/sandbox/fund-float', body)
    expect(response.status).toBe(422)
    expect(response.body.error).toBe('validation_error')
    expect((await client.get<FloatJson>('/api/v1/rail/float')).body.bookedBalanceKobo).toBe(0)
  })

  it('needs a signed request', async () => {
    const response = await fetch(`${app.baseUrl}/api/v1/rail/sandbox/fund-float`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amountKobo":1}',
    })
    expect(response.status).toBe(401)
  })
})

describe('rail sandbox fund-float', () => {
  // Six `rail` processes one after another: on a busy machine each may take seconds to start.
  it('funds a sandbox partner, refuses a live one and a bad amount', { timeout: 120_000 }, async () => {
    const { credentials, client } = await app.newPartner()
    const env = { DATABASE_URL: app.db.url }
    const funded = await runRail(
      ['sandbox', 'fund-float', '--partner', credentials.partnerId, '--amount', '120000', '--reference', 'cli-1'],
      env,
    )
    expect(funded.code).toBe(0)
    expect(funded.stdout).toContain('funded 120000 kobo')
    const again = await runRail(
      ['sandbox', 'fund-float', '--partner', credentials.partnerId, '--amount', '120000', '--reference', 'cli-1'],
      env,
    )
    expect(again.stdout).toContain('already funded 120000 kobo')
    const noReference = await runRail(
      ['sandbox', 'fund-float', '--partner', credentials.partnerId, '--amount', '1000'],
      env,
    )
    expect(noReference.code).not.toBe(0)
    expect(noReference.stderr).toContain('--reference')
    expect((await client.get<FloatJson>('/api/v1/rail/float')).body.availableBalanceKobo).toBe(120_000)

    const live = await app.newPartner({ environment: 'live' })
    const refused = await runRail(
      ['sandbox', 'fund-float', '--partner', live.credentials.partnerId, '--amount', '1000', '--reference', 'cli-2'],
      env,
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('not found')
    const badAmount = await runRail(
      ['sandbox', 'fund-float', '--partner', credentials.partnerId, '--amount', '12.5', '--reference', 'cli-3'],
      env,
    )
    expect(badAmount.code).not.toBe(0)
    const aboveLimit = await runRail(
      ['sandbox', 'fund-float', '--partner', credentials.partnerId, '--amount', '1000', '--reference', 'cli-4'],
      { ...env, RAIL_MAX_AMOUNT_KOBO: '999' },
    )
    expect(aboveLimit.code).toBe(1)
    expect(aboveLimit.stderr).toContain('above the maximum of one instruction, 999 kobo')
    expect((await client.get<FloatJson>('/api/v1/rail/float')).body.availableBalanceKobo).toBe(120_000)
  })
})
