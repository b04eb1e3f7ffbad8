// Provider profiles and approvals: the two sandbox profiles, fail-closed checks, and the CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailError } from '../../src/platform/errors.ts'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createPartner } from '../../src/partners/service.ts'
import { ProviderRegistry } from '../../src/banking/providers/registry.ts'
import {
  CAPABILITIES,
  getProvider,
  listProviders,
  partnerRoutes,
  providerFor,
  requireCapability,
  setCapability,
  setPartnerRoutes,
} from '../../src/banking/providers/service.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
const MASTER_KEY_HEX = randomBytes(32).toString('hex')
beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(async () => db?.drop())

describe('provider profiles', () => {
  it('ship a fully approved sandbox, a restricted one without merchant credit and debit, and the dialects of Paystack and Monnify', async () => {
    const providers = await listProviders(db.pool)
    expect(providers.map((p) => p.name)).toEqual([
      'sandbox',
      'sandbox-monnify',
      'sandbox-paystack',
      'sandbox-restricted',
    ])
    for (const dialect of [providers[1]!, providers[2]!]) {
      // Served by this server's sandbox; neither real provider has merchant credit, debit or transfers between wallets.
      expect(dialect.baseUrl).toBeNull()
      expect(dialect.capabilities).toEqual({
        merchantCredit: false,
        debit: false,
        walletTransfer: false,
        bankPayout: true,
        nameCheck: true,
        narration: true,
        virtualAccounts: true,
      })
    }
    providers.splice(1, 2)
    expect(Object.values(providers[0]!.capabilities).every(Boolean)).toBe(true)
    expect(providers[1]!.capabilities).toEqual({
      merchantCredit: false,
      debit: false,
      walletTransfer: true,
      bankPayout: true,
      nameCheck: true,
      narration: true,
      virtualAccounts: true,
    })
  })

  it.each(CAPABILITIES.map((capability) => [capability]))(
    '%s fails closed with 403 capability_disabled when withdrawn',
    async (capability) => {
      const approved = await getProvider(db.pool, 'sandbox')
      expect(() => requireCapability(approved, capability)).not.toThrow()
      const withdrawn = { ...approved, capabilities: { ...approved.capabilities, [capability]: false } }
      try {
        requireCapability(withdrawn, capability)
        expect.unreachable()
      } catch (error) {
        expect(error).toBeInstanceOf(RailError)
        expect(error).toMatchObject({
          code: 'capability_disabled',
          statusCode: 403,
          details: { provider: 'sandbox', capability },
        })
      }
    },
  )

  it('approval is stored and can be withdrawn again', async () => {
    expect((await setCapability(db.pool, 'sandbox-restricted', 'debit', true)).capabilities.debit).toBe(true)
    expect((await getProvider(db.pool, 'sandbox-restricted')).capabilities.debit).toBe(true)
    expect((await setCapability(db.pool, 'sandbox-restricted', 'debit', false)).capabilities.debit).toBe(false)
    await expect(setCapability(db.pool, 'no-such-provider', 'debit', true)).rejects.toMatchObject({ code: 'not_found' })
    await expect(getProvider(db.pool, 'no-such-provider')).rejects.toMatchObject({ code: 'not_found' })
  })
})

describe('rail provider', () => {
  it('lists providers and sets a capability', async () => {
    const env = { DATABASE_URL: db.url }
    const listed = await runRail(['provider', 'list', '--json'], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).map((p: { name: string }) => p.name)).toEqual([
      'sandbox',
      'sandbox-monnify',
      'sandbox-paystack',
      'sandbox-restricted',
    ])

    const set = await runRail(['provider', 'set', 'sandbox-restricted', 'merchantCredit=true'], env)
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toContain('merchantCredit=true')
    expect((await getProvider(db.pool, 'sandbox-restricted')).capabilities.merchantCredit).toBe(true)
    await setCapability(db.pool, 'sandbox-restricted', 'merchantCredit', false)
  })

  it.each([
    [['provider', 'set', 'sandbox', 'teleport=true']],
    [['provider', 'set', 'sandbox', 'debit=yes']],
    [['provider', 'set', 'nobody', 'debit=true']],
  ])('refuses %j', async (args) => {
    const result = await runRail(args, { DATABASE_URL: db.url })
    expect(result.code).not.toBe(0)
    expect((await getProvider(db.pool, 'sandbox')).capabilities.debit).toBe(true)
  })
})

describe('rail provider add and set: real providers, their secrets sealed and never shown', () => {
  const SECRET_KEY = `sk_live_${'9'.repeat(40)}`
  const API_KEY = 'MK_PROD_ABCDEF1234'

  it('adds a Paystack profile from a key file, lists it without the key, changes its address and refuses what Paystack cannot do', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rail-provider-'))
    const keyFile = path.join(dir, 'paystack.key')
    writeFileSync(keyFile, `${SECRET_KEY}\n`)
    const env = { DATABASE_URL: db.url, RAIL_MASTER_KEY: MASTER_KEY_HEX }
    const added = await runRail(
      [
        'provider',
        'add',
        'paystack-live',
        '--adapter',
        'paystack',
        '--base-url',
        'https://api.paystack.co',
        '--secret-key-file',
        keyFile,
      ],
      env,
    )
    expect(added.code, added.stderr).toBe(0)
    expect(added.stdout).toContain('adapter=paystack')
    expect(added.stdout).toContain('debit=false')
    const listed = await runRail(['provider', 'list', '--json'], env)
    const profile = JSON.parse(listed.stdout).find((p: { name: string }) => p.name === 'paystack-live')
    expect(profile).toMatchObject({
      adapter: 'paystack',
      baseUrl: 'https://api.paystack.co',
      traits: { deduplicatesReferences: true, requestValidityWindowMs: null, amountUnit: 'kobo' },
    })
    expect(profile.health).toMatchObject({ healthy: true, calls: 0 })
    const text = await runRail(['provider', 'list'], env)
    for (const output of [added.stdout, added.stderr, listed.stdout, text.stdout, text.stderr])
      expect(output).not.toContain(SECRET_KEY)
    // Stored sealed: the key's bytes are not in the row.
    const row = await db.pool.query<{ sealed: Buffer }>(
      `SELECT sealed_secrets AS sealed FROM providers WHERE name = 'paystack-live'`,
    )
    expect(row.rows[0]!.sealed.toString('latin1')).not.toContain(SECRET_KEY)

    const moved = await runRail(
      ['provider', 'set', 'paystack-live', '--base-url', 'https://paystack.example.test/'],
      env,
    )
    expect(moved.code, moved.stderr).toBe(0)
    expect((await getProvider(db.pool, 'paystack-live')).baseUrl).toBe('https://paystack.example.test')
    const refused = await runRail(['provider', 'set', 'paystack-live', 'debit=true'], env)
    expect(refused.code).not.toBe(0)
    expect((await getProvider(db.pool, 'paystack-live')).capabilities.debit).toBe(false)
  })

  it('adds a Monnify profile from environment variables, and refuses one missing a secret, a plain-http address or a taken name', async () => {
    const env = {
      DATABASE_URL: db.url,
      RAIL_MASTER_KEY: MASTER_KEY_HEX,
      MONNIFY_API_KEY: API_KEY,
      MONNIFY_SECRET: SECRET_KEY,
    }
    const base = [
      'provider',
      'add',
      'monnify-live',
      '--adapter',
      'monnify',
      '--base-url',
      'https://api.monnify.com',
      '--contract-code',
      '1234567890',
      '--source-account',
      '3934178936',
      '--customer-email-domain',
      'customers.example.ng',
    ]
    const missing = await runRail([...base, '--api-key-env', 'MONNIFY_API_KEY'], env)
    expect(missing.code).not.toBe(0)
    const plain = await runRail(
      [
        'provider',
        'add',
        'plain',
        '--adapter',
        'paystack',
        '--base-url',
        'http://api.paystack.co',
        '--secret-key-env',
        'MONNIFY_SECRET',
      ],
      env,
    )
    expect(plain.code).not.toBe(0)
    const added = await runRail(
      [...base, '--api-key-env', 'MONNIFY_API_KEY', '--secret-key-env', 'MONNIFY_SECRET'],
      env,
    )
    expect(added.code, added.stderr).toBe(0)
    for (const output of [added.stdout, added.stderr]) {
      expect(output).not.toContain(API_KEY)
      expect(output).not.toContain(SECRET_KEY)
    }
    expect(await getProvider(db.pool, 'monnify-live')).toMatchObject({
      adapter: 'monnify',
      settings: {
        contractCode: '1234567890',
        sourceAccountNumber: '3934178936',
        customerEmailDomain: 'customers.example.ng',
      },
    })
    const again = await runRail(
      [...base, '--api-key-env', 'MONNIFY_API_KEY', '--secret-key-env', 'MONNIFY_SECRET'],
      env,
    )
    expect(again.code).not.toBe(0)
    expect((await listProviders(db.pool)).map((p) => p.name)).not.toContain('plain')
  })
})

describe('rail partners providers', () => {
  it("routes a partner's payouts, collections and wallets, prints them, and refuses an unknown or unapproved provider", async () => {
    const partner = await createPartner(db.pool, randomBytes(32), {
      name: 'Routed',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    const env = { DATABASE_URL: db.url }
    const set = await runRail(
      [
        'partners',
        'providers',
        '--partner',
        partner.partnerId,
        '--payouts',
        'sandbox-paystack,sandbox',
        '--collections',
        'sandbox-monnify',
        '--json',
      ],
      env,
    )
    expect(set.code, set.stderr).toBe(0)
    expect(JSON.parse(set.stdout)).toEqual({
      partnerId: partner.partnerId,
      payouts: ['sandbox-paystack', 'sandbox'],
      collections: ['sandbox-monnify'],
      wallets: [],
    })
    expect((await providerFor(db.pool, partner.partnerId, 'payouts')).name).toBe('sandbox-paystack')
    expect((await providerFor(db.pool, partner.partnerId, 'collections')).name).toBe('sandbox-monnify')
    expect((await providerFor(db.pool, partner.partnerId, 'wallets')).name).toBe('sandbox')

    for (const args of [
      ['--payouts', 'nobody'],
      ['--collections', 'sandbox,sandbox-paystack'],
      ['--payouts', 'sandbox,sandbox'],
      ['--wallets', 'sandbox-paystack'],
    ]) {
      const refused = await runRail(['partners', 'providers', '--partner', partner.partnerId, ...args], env)
      expect(refused.code, args.join(' ')).not.toBe(0)
    }
    await setCapability(db.pool, 'sandbox-monnify', 'bankPayout', false)
    const unapproved = await runRail(
      ['partners', 'providers', '--partner', partner.partnerId, '--payouts', 'sandbox-monnify'],
      env,
    )
    expect(unapproved.code).not.toBe(0)
    await setCapability(db.pool, 'sandbox-monnify', 'bankPayout', true)
    expect((await partnerRoutes(db.pool, partner.partnerId)).payouts).toEqual(['sandbox-paystack', 'sandbox'])

    const cleared = await runRail(['partners', 'providers', '--partner', partner.partnerId, '--payouts', ''], env)
    expect(cleared.code, cleared.stderr).toBe(0)
    expect((await providerFor(db.pool, partner.partnerId, 'payouts')).name).toBe('sandbox')
    const unknownPartner = await runRail(
      ['partners', 'providers', '--partner', randomUUID(), '--payouts', 'sandbox'],
      env,
    )
    expect(unknownPartner.code).not.toBe(0)
  })
})

describe('a server that serves no sandbox (production)', () => {
  it("refuses, before anything is written, a partner's money through the sandbox's profiles: 403 capability_disabled naming the fix", async () => {
    const partner = await createPartner(db.pool, randomBytes(32), {
      name: 'Live',
      customerClass: 'corporate',
      environment: 'live',
    })
    const production = new ProviderRegistry(db.pool, undefined)
    await expect(providerFor(db.pool, partner.partnerId, 'payouts', production)).rejects.toMatchObject({
      code: 'capability_disabled',
      statusCode: 403,
    })
    await setPartnerRoutes(db.pool, partner.partnerId, { payouts: ['sandbox-paystack'] })
    await expect(providerFor(db.pool, partner.partnerId, 'payouts', production)).rejects.toMatchObject({
      code: 'capability_disabled',
      message: expect.stringContaining('rail partners providers'),
    })
    await expect(production.adapterFor(await getProvider(db.pool, 'sandbox'))).rejects.toMatchObject({
      code: 'capability_disabled',
    })
  })
})
