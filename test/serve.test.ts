// The newcomer's path, for real: `rail serve` on embedded PostgreSQL in a fresh data directory,
// a signed call with the printed credentials, the CLI joining the running database, a clear
// refusal of a second start, a clean stop, data surviving a restart, and recovery after SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process'
import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailClient } from '../src/client/index.ts'
import { findFreePort } from '../src/platform/embedded-db.ts'
import { PROJECT_ROOT, RAIL_BIN, runRail } from './support/cli.ts'

const START_TIMEOUT_MS = 60_000

/** Runs a program from the project's root to its end: its exit code and output. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: PROJECT_ROOT, env, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

interface Served {
  child: ChildProcess
  stdout: () => string
  exited: Promise<number | null>
  baseUrl: string
  credentials: Record<string, string>
}

function serveEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RAIL_DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'text',
  }
  delete env.DATABASE_URL
  delete env.RAIL_MASTER_KEY
  return env
}

function startServe(
  dataDir: string,
  port: number,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [RAIL_BIN, 'serve'], {
    cwd: PROJECT_ROOT,
    env: serveEnv(dataDir, port),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

async function serveUntilReady(dataDir: string, port: number): Promise<Served> {
  const started = startServe(dataDir, port)
  const deadline = Date.now() + START_TIMEOUT_MS
  while (!started.output().includes('Stop with Ctrl-C.')) {
    if (started.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`serve did not start:\n${started.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const field = (name: string) => new RegExp(`^\\s+${name}\\s+(\\S+)$`, 'm').exec(started.output())?.[1] ?? ''
  const credentials = Object.fromEntries(
    ['partnerId', 'keyId', 'signingSecret', 'escrowApiKey', 'callbackSigningSecret'].map((name) => [name, field(name)]),
  )
  return { child: started.child, stdout: started.output, exited: started.exited, baseUrl: field('API'), credentials }
}

let dataDir: string

beforeAll(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-serve-'))
  chmodSync(dataDir, 0o755)
})
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('rail serve on a fresh data directory', () => {
  it(
    'starts, answers signed calls, shares its database with the CLI, refuses a second start, stops cleanly, and keeps its data',
    { timeout: 180_000 },
    async () => {
      const port = await findFreePort()
      const first = await serveUntilReady(dataDir, port)
      expect(first.baseUrl).toBe(`http://127.0.0.1:${port}`)
      expect(first.stdout()).toContain(`Docs      http://127.0.0.1:${port}/docs`)
      // The banner names the data directory it was given, and the log lines around it are text, not JSON.
      expect(first.stdout()).toContain(
        `First call:  RAIL_DATA_DIR=${dataDir} scripts/rail-curl.sh GET /api/v1/rail/settings   (reads ${path.join(dataDir, 'sandbox-partner.json')})`,
      )
      expect(first.stdout()).toMatch(
        /^\d\d:\d\d:\d\d\.\d{3} {2}INFO {3}Server listening at http:\/\/127\.0\.0\.1:\d+$/m,
      )
      expect(first.stdout()).not.toMatch(/^\{"level"/m)
      expect((await fetch(`${first.baseUrl}/readyz`)).status).toBe(200)
      const settings = await new RailClient(first.baseUrl, {
        keyId: first.credentials.keyId!,
        signingSecret: first.credentials.signingSecret!,
      }).get<{ partnerId: string }>('/api/v1/rail/settings')
      expect(settings.status).toBe(200)
      expect(settings.body.partnerId).toBe(first.credentials.partnerId)
      expect(readFileSync(path.join(dataDir, 'master.key')).length).toBeGreaterThan(0)

      // The CLI finds the running embedded database through the data directory.
      const created = await runRail(['partner', 'create', '--name', 'Second', '--class', 'corporate', '--json'], {
        RAIL_DATA_DIR: dataDir,
      })
      expect(created.code, created.stderr).toBe(0)
      const second = JSON.parse(created.stdout) as { keyId: string; signingSecret: string; partnerId: string }
      expect((await new RailClient(first.baseUrl, second).get('/api/v1/rail/settings')).status).toBe(200)

      // A second start on the same data directory fails with a clear message.
      const again = await runRail(['serve'], { RAIL_DATA_DIR: dataDir, PORT: String(await findFreePort()) })
      expect(again.code).toBe(1)
      expect(again.stderr).toMatch(
        /^rail: Rail is already running \(pid \d+ serving http:\/\/127\.0\.0\.1:\d+\); its data directory .* is in use\n$/,
      )

      // The newcomer's scripts find the running server and its partner through the data directory alone (no PORT).
      const scriptEnv: NodeJS.ProcessEnv = { ...process.env, RAIL_DATA_DIR: dataDir }
      delete scriptEnv.PORT
      const curl = await run('bash', ['scripts/rail-curl.sh', 'GET', '/api/v1/rail/settings'], scriptEnv)
      expect(curl.code, curl.stderr).toBe(0)
      expect(JSON.parse(curl.stdout)).toMatchObject({ partnerId: first.credentials.partnerId })

      // Rotating the sandbox partner's escrow key with the CLI updates its saved file; the example then runs on the new key.
      const rotated = await runRail(
        ['partner', 'rotate-api-key', '--partner', first.credentials.partnerId!, '--overlap-hours', '0', '--json'],
        { RAIL_DATA_DIR: dataDir },
      )
      expect(rotated.code, rotated.stderr).toBe(0)
      expect(rotated.stderr).toContain(`updated ${path.join(dataDir, 'sandbox-partner.json')}`)
      const saved = JSON.parse(readFileSync(path.join(dataDir, 'sandbox-partner.json'), 'utf8')) as Record<
        string,
        string
      >
      expect(saved.escrowApiKey).toBe((JSON.parse(rotated.stdout) as { escrowApiKey: string }).escrowApiKey)
      const example = await run(process.execPath, ['scripts/escrow-example.ts'], scriptEnv)
      expect(example.code, example.stderr).toBe(0)
      expect(example.stdout).toContain('done: every event arrived signed and verified')
      // With the replaced key (a file nobody updated), it says what to do instead of crashing.
      const staleFile = path.join(dataDir, 'stale-partner.json')
      writeFileSync(staleFile, JSON.stringify({ ...saved, escrowApiKey: first.credentials.escrowApiKey }))
      const stale = await run(process.execPath, ['scripts/escrow-example.ts'], {
        ...scriptEnv,
        RAIL_CREDENTIALS_FILE: staleFile,
      })
      expect(stale.code).toBe(1)
      expect(stale.stderr).toContain('is no longer valid')
      expect(stale.stderr).not.toContain('TypeError')

      // SIGTERM drains and stops everything, embedded PostgreSQL included.
      first.child.kill('SIGTERM')
      expect(await first.exited).toBe(0)
      expect(first.stdout()).toContain('rail: stopped cleanly')
      expect(existsSync(path.join(dataDir, 'runtime.json'))).toBe(false)
      expect(existsSync(path.join(dataDir, 'pgdata', 'postmaster.pid'))).toBe(false)

      // With nothing running, the CLI starts the embedded database itself; the data survived.
      const listed = await runRail(['partner', 'list', '--json'], { RAIL_DATA_DIR: dataDir })
      expect(listed.code, listed.stderr).toBe(0)
      const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((partner) => partner.id)
      expect(ids).toEqual([first.credentials.partnerId, second.partnerId])

      // A restart shows the same sandbox partner, with the rotated escrow key, whose credentials work.
      const restarted = await serveUntilReady(dataDir, port)
      expect(restarted.credentials).toEqual({ ...first.credentials, escrowApiKey: saved.escrowApiKey })
      expect((await new RailClient(restarted.baseUrl, second).get('/api/v1/rail/settings')).status).toBe(200)

      // Killed without warning, it loses nothing and the next start recovers the data directory.
      restarted.child.kill('SIGKILL')
      await restarted.exited
      const recovered = await serveUntilReady(dataDir, port)
      expect((await new RailClient(recovered.baseUrl, second).get('/api/v1/rail/settings')).status).toBe(200)
      recovered.child.kill('SIGINT')
      expect(await recovered.exited).toBe(0)
    },
  )

  it('a port in use is reported as such, before a database is started', { timeout: 60_000 }, async () => {
    const otherDir = mkdtempSync(path.join(os.tmpdir(), 'rail-port-'))
    chmodSync(otherDir, 0o755)
    const blocker = await import('node:net').then((net) => net.createServer().listen(0, '127.0.0.1'))
    await new Promise((resolve) => blocker.once('listening', resolve))
    const address = blocker.address()
    const busyPort = typeof address === 'object' && address ? address.port : 0
    try {
      const result = await runRail(['serve'], { RAIL_DATA_DIR: otherDir, PORT: String(busyPort) })
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(new RegExp(`^rail: port ${busyPort} on 127\\.0\\.0\\.1 is in use`))
      expect(existsSync(path.join(otherDir, 'runtime.json'))).toBe(false)
      // Refused before any database was made for nothing.
      expect(existsSync(path.join(otherDir, 'pgdata'))).toBe(false)
    } finally {
      blocker.close()
      rmSync(otherDir, { recursive: true, force: true })
    }
  })
})
