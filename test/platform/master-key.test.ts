// One master key for every process: `rail api` and `rail worker` refuse to start without
// RAIL_MASTER_KEY (a key file of their own would seal secrets the other processes cannot open),
// while `rail serve` and the CLI keep making and reusing the development key file.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/platform/config.ts'
import { assertMasterKeyOfDatabase, loadMasterKey, MASTER_KEY_MISMATCH } from '../../src/platform/master-key.ts'
import { createPartner, oldestSealedSigningSecret } from '../../src/partners/service.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
let dataDir: string

beforeAll(async () => {
  db = await createTestDatabase(2)
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-master-key-'))
})
afterAll(async () => {
  await db?.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('rail api and rail worker without RAIL_MASTER_KEY', () => {
  it.each([['api'], ['worker']])(
    '`rail %s` exits 1 with one line naming RAIL_MASTER_KEY and makes no key file',
    async (command) => {
      const ownDir = mkdtempSync(path.join(os.tmpdir(), 'rail-master-key-'))
      try {
        const result = await runRail([command], {
          DATABASE_URL: db.url,
          RAIL_MASTER_KEY: undefined,
          RAIL_DATA_DIR: ownDir,
          PORT: '0',
          WORKER_HTTP_PORT: '0',
        })
        expect(result.code).toBe(1)
        const lines = result.stderr.trim().split('\n')
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(
          /^rail: RAIL_MASTER_KEY is required for `rail api` and `rail worker`: every process must seal and open secrets with the same key/,
        )
        expect(result.stdout).toBe('')
        expect(existsSync(path.join(ownDir, 'master.key'))).toBe(false)
      } finally {
        rmSync(ownDir, { recursive: true, force: true })
      }
    },
  )

  it('an existing master.key in RAIL_DATA_DIR is not taken as shared', async () => {
    writeFileSync(path.join(dataDir, 'master.key'), randomBytes(32).toString('hex'), { mode: 0o600 })
    const result = await runRail(['worker'], {
      DATABASE_URL: db.url,
      RAIL_MASTER_KEY: undefined,
      RAIL_DATA_DIR: dataDir,
      WORKER_HTTP_PORT: '0',
    })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toMatch(/RAIL_MASTER_KEY is required/)
  })

  it('NODE_ENV=production names production, as before', async () => {
    const result = await runRail(['api'], {
      DATABASE_URL: db.url,
      RAIL_MASTER_KEY: undefined,
      NODE_ENV: 'production',
      PORT: '0',
    })
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe('rail: RAIL_MASTER_KEY is required when NODE_ENV=production')
  })
})

describe('rail worker and the sandbox bank', () => {
  it('with SANDBOX_BANK_SECRET and no SANDBOX_BANK_URL, exits 1 with one line saying where to point it', async () => {
    const result = await runRail(['worker'], {
      DATABASE_URL: db.url,
      RAIL_MASTER_KEY: randomBytes(32).toString('hex'),
      SANDBOX_BANK_SECRET: 'shared-bank-secret',
      SANDBOX_BANK_URL: undefined,
      WORKER_HTTP_PORT: '0',
    })
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toMatch(
      /^rail: SANDBOX_BANK_URL is required for `rail worker` when SANDBOX_BANK_SECRET is set/,
    )
  })
})

describe('loadMasterKey', () => {
  it('a process sharing the database takes the given key', () => {
    const hex = randomBytes(32).toString('hex')
    const config = loadConfig({ RAIL_MASTER_KEY: hex, RAIL_DATA_DIR: dataDir })
    expect(loadMasterKey(config, 'shared').toString('hex')).toBe(hex)
  })

  it('a process of its own makes the key file once and reads it back', () => {
    const ownDir = mkdtempSync(path.join(os.tmpdir(), 'rail-master-key-'))
    try {
      const config = loadConfig({ RAIL_DATA_DIR: ownDir })
      const first = loadMasterKey(config, 'own')
      expect(readFileSync(path.join(ownDir, 'master.key'), 'utf8').trim()).toBe(first.toString('hex'))
      expect(loadMasterKey(config).equals(first)).toBe(true)
      expect(() => loadMasterKey(config, 'shared')).toThrow(ConfigError)
    } finally {
      rmSync(ownDir, { recursive: true, force: true })
    }
  })
})

describe('one master key per database', () => {
  it('the first key is recorded; the same key passes again, another is refused', async () => {
    const own = await createTestDatabase(2)
    try {
      const [first, other] = [randomBytes(32), randomBytes(32)]
      await assertMasterKeyOfDatabase(own.pool, first, oldestSealedSigningSecret)
      await assertMasterKeyOfDatabase(own.pool, first, oldestSealedSigningSecret)
      await expect(assertMasterKeyOfDatabase(own.pool, other, oldestSealedSigningSecret)).rejects.toThrow(
        new ConfigError(MASTER_KEY_MISMATCH),
      )
      expect((await own.pool.query(`SELECT count(*)::int AS n FROM master_key_check`)).rows[0].n).toBe(1)
    } finally {
      await own.drop()
    }
  })

  it('on a database with secrets sealed before the record was kept, only the key that opens them is recorded', async () => {
    const own = await createTestDatabase(2)
    try {
      const [sealing, other] = [randomBytes(32), randomBytes(32)]
      await createPartner(own.pool, sealing, {
        name: 'Earlier Partner',
        customerClass: 'fintech',
        environment: 'sandbox',
        callbackUrl: null,
      })
      await expect(assertMasterKeyOfDatabase(own.pool, other, oldestSealedSigningSecret)).rejects.toThrow(
        new ConfigError(MASTER_KEY_MISMATCH),
      )
      expect((await own.pool.query(`SELECT count(*)::int AS n FROM master_key_check`)).rows[0].n).toBe(0)
      await assertMasterKeyOfDatabase(own.pool, sealing, oldestSealedSigningSecret)
      await expect(assertMasterKeyOfDatabase(own.pool, other, oldestSealedSigningSecret)).rejects.toThrow(
        new ConfigError(MASTER_KEY_MISMATCH),
      )
    } finally {
      await own.drop()
    }
  })

  it('`rail partner create` with a key file of its own, and `rail api` with another RAIL_MASTER_KEY, are refused and change nothing', async () => {
    const own = await createTestDatabase(2)
    const ownDir = mkdtempSync(path.join(os.tmpdir(), 'rail-master-key-'))
    try {
      await assertMasterKeyOfDatabase(own.pool, randomBytes(32), oldestSealedSigningSecret)
      const partners = async () => (await own.pool.query(`SELECT count(*)::int AS n FROM partners`)).rows[0].n
      const before = await partners()
      const created = await runRail(['partner', 'create', '--name', 'Stray Key', '--class', 'fintech'], {
        DATABASE_URL: own.url,
        RAIL_MASTER_KEY: undefined,
        RAIL_DATA_DIR: ownDir,
      })
      expect(created.code).toBe(1)
      expect(created.stderr.trim()).toBe(`rail: ${MASTER_KEY_MISMATCH}`)
      expect(await partners()).toBe(before)

      const api = await runRail(['api'], {
        DATABASE_URL: own.url,
        RAIL_MASTER_KEY: randomBytes(32).toString('hex'),
        RAIL_DATA_DIR: ownDir,
        PORT: '0',
      })
      expect(api.code).toBe(1)
      expect(api.stderr.trim()).toBe(`rail: ${MASTER_KEY_MISMATCH}`)
    } finally {
      await own.drop()
      rmSync(ownDir, { recursive: true, force: true })
    }
  })
})
