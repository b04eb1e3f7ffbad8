// Provider profiles and approvals: the two sandbox profiles, fail-closed checks, and the CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailError } from '../../src/platform/errors.ts'
import { CAPABILITIES, getProvider, listProviders, requireCapability, setCapability } from '../../src/providers/service.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(async () => db?.drop())

describe('provider profiles', () => {
  it('ship a fully approved sandbox and a restricted one without merchant credit and debit', async () => {
    const providers = await listProviders(db.pool)
    expect(providers.map((p) => p.name)).toEqual(['sandbox', 'sandbox-restricted'])
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

  it.each(CAPABILITIES.map((capability) => [capability]))('%s fails closed with 403 capability_disabled when withdrawn', async (capability) => {
    const approved = await getProvider(db.pool, 'sandbox')
    expect(() => requireCapability(approved, capability)).not.toThrow()
    const withdrawn = { ...approved, capabilities: { ...approved.capabilities, [capability]: false } }
    try {
      requireCapability(withdrawn, capability)
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(RailError)
      expect(error).toMatchObject({ code: 'capability_disabled', statusCode: 403, details: { provider: 'sandbox', capability } })
    }
  })

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
    expect(JSON.parse(listed.stdout).map((p: { name: string }) => p.name)).toEqual(['sandbox', 'sandbox-restricted'])

    const set = await runRail(['provider', 'set', 'sandbox-restricted', 'merchantCredit=true'], env)
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toContain('merchantCredit=true')
    expect((await getProvider(db.pool, 'sandbox-restricted')).capabilities.merchantCredit).toBe(true)
    await setCapability(db.pool, 'sandbox-restricted', 'merchantCredit', false)
  })

  it.each([[['provider', 'set', 'sandbox', 'teleport=true']], [['provider', 'set', 'sandbox', 'debit=yes']], [['provider', 'set', 'nobody', 'debit=true']]])(
    'refuses %j',
    async (args) => {
      const result = await runRail(args, { DATABASE_URL: db.url })
      expect(result.code).not.toBe(0)
      expect((await getProvider(db.pool, 'sandbox')).capabilities.debit).toBe(true)
    },
  )
})
