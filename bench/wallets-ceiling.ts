// npm run bench:wallets-ceiling — the most wallet transfers/s this machine could serve with the
// architecture issue #4 requires, measured with everything but the database: signed requests from
// the same load generator as the other benches (a process of its own, 64 connections, requests
// signed before the run), a Fastify server built by the project's createHttpServer that checks
// each request's HMAC and makes one signed HTTP call (undici, as the sandbox adapter does) to a
// second Fastify server — the bank — that checks that HMAC and answers. No PostgreSQL, no ledger,
// no JSON schema: what a wallet transfer costs before it does any of its work.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request as httpRequest } from 'undici'
import { canonicalRequest, computeSignature, signRequest } from '../src/client/signing.ts'
import { constantTimeEqual } from '../src/platform/crypto.ts'
import { createHttpServer, type HttpServer } from '../src/platform/http.ts'

const REQUESTS = Number(process.env.BENCH_TRANSFERS ?? 30_000)
const CONNECTIONS = 64
const SECRET = randomBytes(16).toString('hex')

function verified(request: {
  method: string
  raw: { url?: string }
  rawBody: Buffer | null
  headers: Record<string, unknown>
}): boolean {
  const timestamp = Number(request.headers['x-rail-timestamp'])
  const expected = computeSignature(
    SECRET,
    canonicalRequest(timestamp, request.method, request.raw.url ?? '', request.rawBody ?? ''),
  )
  return constantTimeEqual(expected, String(request.headers['x-rail-signature']))
}

async function listen(app: HttpServer): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}

export interface CeilingFigures {
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  errors: number
  serversCpuMsPerRequest: number
  loadGeneratorCpuMsPerRequest: number
  requests: number
  measuredAt: string
  machine: string
}

/** The two servers of the ceiling, listening on loopback: `url` is the API's, which checks requests signed with `secret`. */
export interface CeilingServers {
  url: string
  secret: string
  close(): Promise<void>
}

/**
 * Starts the ceiling's two servers: the bank, then the API that checks each request's HMAC and
 * makes one signed call to the bank (bench:latency runs its open-loop ladder against them too).
 */
export async function startCeilingServers(): Promise<CeilingServers> {
  const bank = createHttpServer(false)
  bank.post('/bank/transfers', async (request, reply) => {
    if (!verified(request)) return reply.code(401).send({ error: 'unauthorized' })
    return { responseCode: '00', sessionId: '1'.repeat(30) }
  })
  const bankUrl = await listen(bank)
  const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 10_000 })

  const rail = createHttpServer(false)
  rail.post('/transfer/wallet', async (request, reply) => {
    if (!verified(request)) return reply.code(401).send({ error: 'unauthorized' })
    const body = JSON.stringify({
      reference: (request.body as { clientReference?: string }).clientReference,
      amountKobo: 100,
    })
    const headers = signRequest({
      keyId: 'sandbox',
      signingSecret: SECRET,
      method: 'POST',
      pathWithQuery: '/bank/transfers',
      body,
    })
    const answer = await httpRequest(`${bankUrl}/bank/transfers`, {
      method: 'POST',
      body,
      headers: { ...headers, 'content-type': 'application/json' },
      dispatcher: agent,
    })
    const bankAnswer = (await answer.body.json()) as { responseCode: string }
    return { status: bankAnswer.responseCode === '00' ? 'successful' : 'failed' }
  })
  const url = await listen(rail)
  return {
    url,
    secret: SECRET,
    async close() {
      await rail.close()
      await bank.close()
      await agent.close()
    },
  }
}

/**
 * Measures the ceiling and writes bench/results/wallets-ceiling.json; bench:wallets calls it in
 * its own run, so that the wallet figure and its ceiling share the machine's state.
 */
export async function measureCeiling(requests = REQUESTS): Promise<CeilingFigures> {
  const servers = await startCeilingServers()
  const railUrl = servers.url
  try {
    await load(railUrl, 2_000) // warm-up
    const cpuBefore = process.cpuUsage()
    const result = await load(railUrl, requests)
    const cpu = process.cpuUsage(cpuBefore)
    const serversCpuMs = (cpu.user + cpu.system) / 1000 / requests
    const figures: CeilingFigures = {
      requestsPerSecond: Math.round(requests / result.measuredSeconds),
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      errors: result.errors + result.non2xx,
      serversCpuMsPerRequest: Math.round(serversCpuMs * 1000) / 1000,
      loadGeneratorCpuMsPerRequest: Math.round((result.loadGeneratorCpuMs / requests) * 1000) / 1000,
      requests,
      measuredAt: new Date().toISOString(),
      machine: `${os.cpus().length} cores, node ${process.version}`,
    }
    console.log(
      `ceiling: ${figures.requestsPerSecond} requests/s, p50 ${figures.latencyP50Ms} ms, p99 ${figures.latencyP99Ms} ms, errors ${figures.errors}; ` +
        `CPU per request: both servers ${figures.serversCpuMsPerRequest} ms, load generator ${figures.loadGeneratorCpuMsPerRequest} ms`,
    )
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'wallets-ceiling.json')
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`)
    console.log(`wrote ${path.relative(process.cwd(), file)}`)
    return figures
  } finally {
    await servers.close()
  }
}

interface LoadResult {
  measuredSeconds: number
  loadGeneratorCpuMs: number
  latency: { p50: number; p99: number }
  errors: number
  non2xx: number
}

function load(baseUrl: string, requests: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(path.dirname(new URL(import.meta.url).pathname), 'outbound-load.ts')],
      {
        env: {
          ...process.env,
          BENCH_BASE_URL: baseUrl,
          BENCH_PATH: '/transfer/wallet',
          BENCH_KEY_ID: 'bench',
          BENCH_SIGNING_SECRET: SECRET,
          BENCH_TRANSFERS: String(requests),
          BENCH_CONNECTIONS: String(CONNECTIONS),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(output) as LoadResult)
        : reject(new Error(`the load generator exited with ${code}`)),
    )
  })
}

// Run on its own (npm run bench:wallets-ceiling), not when bench:wallets imports it.
if (process.argv[1] === fileURLToPath(import.meta.url)) await measureCeiling()
