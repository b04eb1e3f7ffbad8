// `rail listen`, run as the real command: it finds the partner's credentials and the running
// server as a developer's laptop has them (RAIL_DATA_DIR's sandbox-partner.json and runtime.json),
// forwards a real event to a real local receiver signed exactly as a delivery, prints one line
// per event with the receiver's status, filters by type, and after the server goes away and comes
// back it resumes, losing and repeating nothing.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApi } from '../../src/app.ts'
import { verifyRailSignature } from '../../src/client/webhooks.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import type { HttpServer } from '../../src/platform/http.ts'
import { deliveryHeaders, standardWebhooksSignature } from '../../src/events/signing.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { PROJECT_ROOT, RAIL_BIN } from '../support/cli.ts'
import { record } from '../support/events.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

let app: TestApp
/** The API the tests talk to: the test app's, or the one started again in its place. */
let api: HttpServer
let receiver: Receiver
const listeners: Listener[] = []
const dataDirs: string[] = []

beforeAll(async () => {
  // The app and the database share one host: the stream's margin for clocks disagreeing (1 s by default) can be small.
  app = await startTestApp({ eventStream: { clockMarginMs: 100 } })
  api = app.api
  receiver = await startReceiver()
})
afterAll(async () => {
  for (const listener of listeners) listener.stop()
  await receiver?.close()
  if (api !== app?.api) {
    await api.close()
    await app.db.drop()
  } else {
    await app?.close()
  }
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
})

interface Listener {
  lines: string[]
  stderr: string[]
  child: ChildProcess
  stop(): void
}

/** A data directory as `npm start` leaves it: the sandbox partner's credentials and the running server's address. */
function laptopDataDir(credentials: PartnerCredentials): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rail-listen-'))
  dataDirs.push(dir)
  writeFileSync(path.join(dir, 'sandbox-partner.json'), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  // This test process stands for the running `rail serve` (its pid is alive).
  writeFileSync(
    path.join(dir, 'runtime.json'),
    `${JSON.stringify({ pid: process.pid, pgPort: 0, apiUrl: app.baseUrl })}\n`,
    { mode: 0o600 },
  )
  return dir
}

async function startListener(dataDir: string, args: string[]): Promise<Listener> {
  const env: NodeJS.ProcessEnv = { ...process.env, RAIL_DATA_DIR: dataDir }
  for (const name of [
    'DATABASE_URL',
    'RAIL_URL',
    'RAIL_KEY_ID',
    'RAIL_SIGNING_SECRET',
    'RAIL_CALLBACK_SIGNING_SECRET',
    'RAIL_ESCROW_WEBHOOK_SECRET',
    'RAIL_CREDENTIALS_FILE',
    'PORT',
  ])
    delete env[name]
  const child = spawn(process.execPath, [RAIL_BIN, 'listen', ...args], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const listener: Listener = { lines: [], stderr: [], child, stop: () => child.kill('SIGTERM') }
  listeners.push(listener)
  let pending = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    const complete = pending.split('\n')
    pending = complete.pop()!
    listener.lines.push(...complete)
  })
  child.stderr!.on('data', (chunk: Buffer) => listener.stderr.push(chunk.toString('utf8')))
  await waitFor(
    () => listener.lines.some((line) => line.startsWith('Ready')) || child.exitCode !== null,
    60_000,
    'rail listen ready',
  )
  if (child.exitCode !== null) throw new Error(`rail listen exited ${child.exitCode}: ${listener.stderr.join('')}`)
  return listener
}

/** A real event from a real flow: an outbound transfer the float cannot cover fails at once and is called back (transfer.failed). */
async function failedTransfer(partner: Awaited<ReturnType<TestApp['newPartner']>>): Promise<string> {
  const answer = await partner.client.post<{ id: string; state: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo: 5_000,
    currency: 'NGN',
    beneficiaryAccountNumber: '0000014579',
    beneficiaryBankCode: '011',
    beneficiaryAccountName: 'Ada Obi',
  })
  expect(answer.status).toBe(202)
  const { rows } = await app.db.pool.query<{ id: string }>(
    `SELECT id FROM events WHERE partner_id = $1 AND type = 'transfer.failed' AND object_id = $2`,
    [partner.credentials.partnerId, answer.body.id],
  )
  expect(rows).toHaveLength(1)
  return rows[0]!.id
}

function requestsFor(hookPath: string) {
  return receiver.requests.filter((request) => request.path === hookPath)
}

describe('rail listen', () => {
  it(
    'forwards a real event to the local URL with the body and headers of a real delivery, validly signed, and prints its status',
    { timeout: 120_000 },
    async () => {
      const partner = await app.newPartner()
      const hookPath = `/hooks/${randomUUID()}`
      receiver.answer = (request) => (request.path === hookPath ? { status: 204 } : { status: 200 })
      const listener = await startListener(laptopDataDir(partner.credentials), [
        '--forward-to',
        `${receiver.url.replace('/hooks', '')}${hookPath}`,
      ])
      const eventId = await failedTransfer(partner)
      await waitFor(() => requestsFor(hookPath).length >= 1, 30_000, 'the forwarded event')
      const [forwarded] = requestsFor(hookPath)
      const { rows } = await app.db.pool.query<{ body: string }>(`SELECT body FROM events WHERE id = $1`, [eventId])
      expect(forwarded!.method).toBe('POST')
      expect(forwarded!.rawBody).toBe(rows[0]!.body)
      const secret = partner.credentials.callbackSigningSecret
      const timestampS = Number(forwarded!.headers['x-rail-timestamp'])
      expect(verifyRailSignature(forwarded!.rawBody, forwarded!.headers['x-rail-signature'] as string, secret)).toBe(
        true,
      )
      expect(forwarded!.headers['webhook-signature']).toBe(
        standardWebhooksSignature(eventId, timestampS, forwarded!.rawBody, secret),
      )
      // Every header a delivery attempt sends, with the same values.
      const expected = deliveryHeaders({
        eventId,
        eventType: 'transfer.failed',
        body: rows[0]!.body,
        timestampS,
        secret,
      })
      for (const [name, value] of Object.entries(expected)) expect(forwarded!.headers[name], name).toBe(value)
      await waitFor(() => listener.lines.some((line) => line.includes(eventId)), 20_000, 'the printed line')
      expect(listener.lines.find((line) => line.includes(eventId))).toMatch(
        new RegExp(`transfer\\.failed\\s+${eventId}\\s+-> 204$`),
      )
    },
  )

  it('--events forwards only the types that match its patterns', { timeout: 120_000 }, async () => {
    const partner = await app.newPartner()
    const hookPath = `/hooks/${randomUUID()}`
    const listener = await startListener(laptopDataDir(partner.credentials), [
      '--forward-to',
      `${receiver.url.replace('/hooks', '')}${hookPath}`,
      '--events',
      'transfer.*,refund.succeeded',
    ])
    const partnerId = partner.credentials.partnerId
    // Left out first, then wanted: events are forwarded in order, so the last one arriving means the others were judged.
    const leftOut = [
      await record(app.db.pool, { partnerId, type: 'credit.confirmed' }),
      await record(app.db.pool, { partnerId, type: 'refund.failed' }),
    ]
    const wanted = [await record(app.db.pool, { partnerId, type: 'refund.succeeded' }), await failedTransfer(partner)]
    await waitFor(() => requestsFor(hookPath).length >= 2, 30_000, 'the matching events')
    const forwardedIds = requestsFor(hookPath).map((request) => (JSON.parse(request.rawBody) as { id: string }).id)
    expect(forwardedIds).toEqual(wanted)
    for (const id of leftOut) expect(listener.lines.join('\n')).not.toContain(id)
  })

  it(
    'signs escrow events with the escrow webhook secret when given, and the others with the callback secret',
    { timeout: 120_000 },
    async () => {
      const partner = await app.newPartner()
      const hookPath = `/hooks/${randomUUID()}`
      const escrowSecret = `escrow-secret-${randomUUID()}`
      await startListener(laptopDataDir(partner.credentials), [
        '--forward-to',
        `${receiver.url.replace('/hooks', '')}${hookPath}`,
        '--escrow-webhook-secret',
        escrowSecret,
      ])
      const partnerId = partner.credentials.partnerId
      const escrowEvent = await record(app.db.pool, { partnerId, type: 'escrow.funded' })
      const transferEvent = await failedTransfer(partner)
      await waitFor(() => requestsFor(hookPath).length >= 2, 30_000, 'both events')
      const byId = new Map(
        requestsFor(hookPath).map((request) => [(JSON.parse(request.rawBody) as { id: string }).id, request]),
      )
      const signedWith = (id: string, secret: string) =>
        verifyRailSignature(byId.get(id)!.rawBody, byId.get(id)!.headers['x-rail-signature'] as string, secret)
      expect([
        signedWith(escrowEvent, escrowSecret),
        signedWith(escrowEvent, partner.credentials.callbackSigningSecret),
      ]).toEqual([true, false])
      expect([
        signedWith(transferEvent, partner.credentials.callbackSigningSecret),
        signedWith(transferEvent, escrowSecret),
      ]).toEqual([true, false])
    },
  )

  it(
    'resumes after the server goes away and comes back: every event forwarded once, in order',
    { timeout: 180_000 },
    async () => {
      const partner = await app.newPartner()
      const partnerId = partner.credentials.partnerId
      const hookPath = `/hooks/${randomUUID()}`
      const listener = await startListener(laptopDataDir(partner.credentials), [
        '--forward-to',
        `${receiver.url.replace('/hooks', '')}${hookPath}`,
      ])
      const ids = [
        await record(app.db.pool, { partnerId, objectId: 'before-1' }),
        await record(app.db.pool, { partnerId, objectId: 'before-2' }),
      ]
      await waitFor(() => requestsFor(hookPath).length >= 2, 30_000, 'the events before the drop')

      // The server goes away: its streams are closed.
      const port = Number(new URL(app.baseUrl).port)
      await api.close()
      await waitFor(() => listener.lines.some((line) => line.startsWith('stream dropped')), 30_000, 'the drop noticed')
      // Recorded while no server runs (by the workers, say).
      ids.push(
        await record(app.db.pool, { partnerId, objectId: 'while-down-1' }),
        await record(app.db.pool, { partnerId, objectId: 'while-down-2' }),
      )
      api = await buildApi({ pool: app.db.pool, masterKey: app.masterKey, allowLoopbackCallbacks: true })
      await api.listen({ host: '127.0.0.1', port })
      await waitFor(
        () => listener.lines.some((line) => line.startsWith('Stream open again')),
        60_000,
        'the stream open again',
      )
      ids.push(await record(app.db.pool, { partnerId, objectId: 'after' }))

      await waitFor(() => requestsFor(hookPath).length >= ids.length, 30_000, 'every event')
      const forwardedIds = requestsFor(hookPath).map((request) => (JSON.parse(request.rawBody) as { id: string }).id)
      expect(forwardedIds).toEqual(ids)
      expect(listener.lines.find((line) => line.startsWith('stream dropped'))).toContain(`resuming after ${ids[1]}`)
    },
  )

  it('ends with an error when the credentials are refused, and when there are none', { timeout: 120_000 }, async () => {
    const partner = await app.newPartner()
    const dir = laptopDataDir({ ...partner.credentials, signingSecret: 'not-the-secret' })
    const env: NodeJS.ProcessEnv = { ...process.env, RAIL_DATA_DIR: dir }
    delete env.DATABASE_URL
    const refused = await runListen(env, ['--forward-to', receiver.url])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('401')
    const empty = mkdtempSync(path.join(tmpdir(), 'rail-listen-'))
    dataDirs.push(empty)
    const none = await runListen({ ...env, RAIL_DATA_DIR: empty }, ['--forward-to', receiver.url])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('no partner credentials')
    writeFileSync(path.join(empty, 'sandbox-partner.json'), '{ not json')
    const unreadable = await runListen({ ...env, RAIL_DATA_DIR: empty }, ['--forward-to', receiver.url])
    expect(unreadable.code).toBe(1)
    expect(unreadable.stderr).toContain('cannot read the credentials')
    const badUrl = await runListen(env, ['--forward-to', 'ftp://example.com/hooks'])
    expect(badUrl.code).not.toBe(0)
  })
})

function runListen(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RAIL_BIN, 'listen', ...args], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    child.on('exit', (code) => resolve({ code, stderr }))
  })
}
