// The `rail` command against a real database: partner credentials, rotation, and failures that
// print one line.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApi } from '../src/app.ts'
import { RailClient } from '../src/client/index.ts'
import type { HttpServer } from '../src/platform/http.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { runRail } from './support/cli.ts'

let db: TestDatabase
let api: HttpServer
let baseUrl: string
const masterKeyHex = randomBytes(32).toString('hex')
const env = () => ({ DATABASE_URL: db.url, RAIL_MASTER_KEY: masterKeyHex })

beforeAll(async () => {
  db = await createTestDatabase()
  api = await buildApi({ pool: db.pool, masterKey: Buffer.from(masterKeyHex, 'hex') })
  await api.listen({ host: '127.0.0.1', port: 0 })
  const address = api.server.address()
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
})
afterAll(async () => {
  await api?.close()
  await db?.drop()
})

describe('rail partner', () => {
  it('create --json prints exactly the five credentials, and they work', async () => {
    const result = await runRail(
      ['partner', 'create', '--name', 'Federal Ministry', '--class', 'government', '--env', 'sandbox', '--json'],
      env(),
    )
    expect(result.code, result.stderr).toBe(0)
    const created = JSON.parse(result.stdout)
    expect(Object.keys(created)).toEqual([
      'partnerId',
      'keyId',
      'signingSecret',
      'escrowApiKey',
      'callbackSigningSecret',
    ])
    const settings = await new RailClient(baseUrl, created).get<{ customerClass: string; name: string }>(
      '/api/v1/rail/settings',
    )
    expect(settings.status).toBe(200)
    expect(settings.body).toMatchObject({ customerClass: 'government', name: 'Federal Ministry' })

    const listed = await runRail(['partner', 'list', '--json'], env())
    expect(JSON.parse(listed.stdout).map((p: { id: string }) => p.id)).toContain(created.partnerId)

    const rotated = await runRail(
      ['partner', 'rotate-secret', '--partner', created.partnerId, '--overlap-hours', '1', '--json'],
      env(),
    )
    expect(rotated.code, rotated.stderr).toBe(0)
    const issued = JSON.parse(rotated.stdout)
    expect(issued.keyId).not.toBe(created.keyId)
    expect((await new RailClient(baseUrl, issued).get('/api/v1/rail/settings')).status).toBe(200)
    expect((await new RailClient(baseUrl, created).get('/api/v1/rail/settings')).status).toBe(200)

    const revoked = await runRail(['partner', 'revoke-key', '--key-id', created.keyId], env())
    expect(revoked.code).toBe(0)
    expect((await new RailClient(baseUrl, created).get('/api/v1/rail/settings')).status).toBe(401)
  })

  it('create with a default callback URL records it', async () => {
    const result = await runRail(
      [
        'partner',
        'create',
        '--name',
        'Hooks Ltd',
        '--class',
        'corporate',
        '--callback-url',
        'https://hooks.example.com/rail',
        '--json',
      ],
      env(),
    )
    const created = JSON.parse(result.stdout)
    const settings = await new RailClient(baseUrl, created).get<{ callbackUrl: string; environment: string }>(
      '/api/v1/rail/settings',
    )
    expect(settings.body).toMatchObject({ callbackUrl: 'https://hooks.example.com/rail', environment: 'sandbox' })
  })

  it.each([
    [['partner', 'create', '--name', 'X', '--class', 'bank']],
    [['partner', 'create', '--class', 'fintech']],
    [['partner', 'create', '--name', 'X', '--class', 'fintech', '--env', 'prod']],
    [['partner', 'create', '--name', 'X', '--class', 'fintech', '--callback-url', 'not a url']],
    [['partner', 'rotate-secret', '--partner', '00000000-0000-7000-8000-000000000000']],
  ])('refuses %j with a non-zero exit and creates nothing', async (args) => {
    const before = await db.pool.query('SELECT count(*)::int AS n FROM partners')
    const result = await runRail(args, env())
    expect(result.code).not.toBe(0)
    expect(result.stderr.trim().length).toBeGreaterThan(0)
    const after = await db.pool.query('SELECT count(*)::int AS n FROM partners')
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })
})

describe('start-up failures', () => {
  it.each([['migrate'], ['serve'], ['api']])(
    '`rail %s` with an unreachable DATABASE_URL exits 1 with a one-line reason',
    async (command) => {
      const result = await runRail([command], {
        DATABASE_URL: 'postgres://rail:secret@127.0.0.1:1/rail',
        RAIL_MASTER_KEY: masterKeyHex,
        PORT: '0',
      })
      expect(result.code).toBe(1)
      const lines = result.stderr.trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^rail: cannot reach the database at postgres:\/\/rail:\*\*\*@127\.0\.0\.1:1\/rail: /)
      expect(result.stderr).not.toContain('secret')
    },
  )

  it('`rail api` without DATABASE_URL says what it needs', async () => {
    const result = await runRail(['api'], { RAIL_MASTER_KEY: masterKeyHex })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^rail: DATABASE_URL is required/)
  })

  it.each([
    [['partner', 'rotate-secret', '--partner', 'nope']],
    [['partner', 'set-callback-url', '--partner', '12345', '--url', 'https://example.com/h']],
    [['dashboard', 'link', '--partner', 'x'.repeat(40)]],
  ])('a malformed id is named as such, not as a database error: %j', async (args) => {
    const result = await runRail(args, env())
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toMatch(/is not a valid id|No partner/)
    expect(result.stderr).not.toMatch(/invalid input syntax|22P02/)
  })

  it('a malformed RAIL_MASTER_KEY is refused', async () => {
    const result = await runRail(['partner', 'list'], { DATABASE_URL: db.url, RAIL_MASTER_KEY: 'short' })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/RAIL_MASTER_KEY must be 32 bytes/)
  })
})
