// A `rail cluster` started as a user starts it (the real command, in a child process), and a
// bounded mixed load against its one port: wallet moves, outbound submits, inbound credits through
// the sandbox bank. Shared by the failover test and bench/cluster.ts, so it imports no test runner.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { RailClient, type RailResponse } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { createPartner, type PartnerCredentials } from '../../src/partners/service.ts'
import type { Pool } from '../../src/platform/db.ts'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'

const RAIL_BIN = fileURLToPath(new URL('../../bin/rail.js', import.meta.url))
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PAYEE = { accountNumber: nuban('058', '246813579'), bankCode: '058' }
/** A request whose answer was lost (its process killed, the server busy) is sent again, as the same request, this many times. */
const ATTEMPTS_MAX = 20
/**
 * A request unanswered this long is taken as lost and sent again. Node's cluster hands each
 * accepted connection to a process; one handed over just as that process is killed is never
 * answered nor closed, so without a deadline the load would wait for it for ever.
 */
const REQUEST_TIMEOUT_MS = 15_000

export interface RunningCluster {
  url: string
  /** The live process of each slot ("api 1", "worker 2"), from the cluster's own output. */
  pids: Map<string, number>
  /** How many processes each slot has had (2 once it was started again). */
  starts: Map<string, number>
  output: string[]
  launcher: ChildProcess
  /** Waits until the cluster's output has a line matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<void>
  /** SIGTERM to the launcher, as a Ctrl-C; answers its exit status. */
  stop(): Promise<number | null>
}

/**
 * The settings the cluster tests start `rail cluster` with, beside the database's: one master key
 * and sandbox bank secret for every process, a free port, small pools, requeries soon after a
 * send, no rate limits (the load is the test's own), loopback callbacks, and quiet logs.
 */
export async function testClusterEnv(secrets: { masterKey: Buffer; bankSecret: string }): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    RAIL_MASTER_KEY: secrets.masterKey.toString('hex'),
    SANDBOX_BANK_SECRET: secrets.bankSecret,
    PORT: String(await findFreePort()),
    LOG_LEVEL: 'warn',
    DATABASE_POOL_MAX: '6',
    WORKER_CONCURRENCY: '6',
    RAIL_ALLOW_LOOPBACK_CALLBACKS: '1',
    RAIL_REQUERY_FIRST_DELAY_MS: '200',
    RAIL_RATE_LIMIT_RPS: '0',
    RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS: '0',
  }
}

/** `rail cluster --api N --worker M [options]` on `env` (DATABASE_URL, PORT…); resolves once it says it is running. */
export async function startCluster(
  size: { api: number; worker: number },
  env: NodeJS.ProcessEnv,
  options: string[] = [],
): Promise<RunningCluster> {
  const launcher = spawn(
    process.execPath,
    [RAIL_BIN, 'cluster', '--api', String(size.api), '--worker', String(size.worker), ...options],
    {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)))
  const cluster: RunningCluster = {
    url: `http://127.0.0.1:${env.PORT}`,
    pids: new Map(),
    starts: new Map(),
    output: [],
    launcher,
    async waitForLine(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs
      while (!cluster.output.some((line) => pattern.test(line))) {
        if (launcher.exitCode !== null)
          throw new Error(`the cluster exited (${launcher.exitCode}):\n${cluster.output.slice(-20).join('\n')}`)
        if (Date.now() > deadline)
          throw new Error(
            `no line matching ${pattern} within ${timeoutMs} ms:\n${cluster.output.slice(-20).join('\n')}`,
          )
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    },
    async stop() {
      if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGTERM')
      return exited
    },
  }
  let pending = ''
  const onData = (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) {
      cluster.output.push(line)
      const started = /^rail cluster: (\w+ \d+) started \(pid (\d+)\)/.exec(line)
      if (started) {
        cluster.pids.set(started[1]!, Number(started[2]))
        cluster.starts.set(started[1]!, (cluster.starts.get(started[1]!) ?? 0) + 1)
      }
    }
  }
  launcher.stdout!.on('data', onData)
  launcher.stderr!.on('data', onData)
  await cluster.waitForLine(/^Rail cluster is running/, 120_000)
  return cluster
}

export interface LoadParty {
  client: RailClient
  credentials: PartnerCredentials
  walletId: string
  virtualAccount: string
}

/** A sandbox partner whose callbacks go to `callbackUrl`, with a funded float and wallet and a virtual account, made over the cluster's port. */
export async function loadParty(
  pool: Pool,
  masterKey: Buffer,
  baseUrl: string,
  callbackUrl: string,
): Promise<LoadParty> {
  const credentials = await createPartner(pool, masterKey, {
    name: 'Cluster Partner',
    customerClass: 'fintech',
    environment: 'sandbox',
    callbackUrl,
  })
  const client = new RailClient(baseUrl, credentials, { timeoutMs: REQUEST_TIMEOUT_MS })
  await acknowledged(
    () =>
      client.post('/api/v1/rail/sandbox/fund-float', { amountKobo: 25_000_000_000, reference: `fund-${randomUUID()}` }),
    [200],
  )
  const wallet = await acknowledged(
    () => client.post<{ walletId: string }>('/wallet', { customerReference: 'cluster-payer', name: 'Payer' }),
    [200, 201],
  )
  const walletId = wallet.body.walletId
  await acknowledged(
    () =>
      client.post('/wallet/credit', {
        walletId,
        reference: `credit-${randomUUID()}`,
        amountKobo: 25_000_000_000,
        currency: 'NGN',
      }),
    [200],
  )
  const account = await acknowledged(
    () => client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: `va-${randomUUID()}` }),
    [200, 201],
  )
  return { client, credentials, walletId, virtualAccount: account.body.virtualAccount }
}

export type OperationKind = 'wallet debit' | 'wallet external send' | 'outbound submit' | 'inbound credit'
export const OPERATION_KINDS: readonly OperationKind[] = [
  'wallet debit',
  'wallet external send',
  'outbound submit',
  'inbound credit',
]

export interface Acknowledgement {
  kind: OperationKind
  /** The partner's reference (wallet moves, outbound) or the bank's session id (inbound credits). */
  reference: string
  /** Rail's id for an outbound transfer, as its answer gave it. */
  id?: string
}

export interface LoadResult {
  acknowledged: Acknowledgement[]
  /** Requests sent again after a lost or refused answer. */
  retries: number
  /** Inbound credits whose answer was lost: a payer's second try would be a second payment, so they are not sent again nor counted. */
  unacknowledgedCredits: number
}

/**
 * `perKind` operations of each kind, `lanes` at a time. Every idempotent request whose answer is
 * lost (a killed process, a refusal while the cluster is busy) is sent again as the same request.
 * `onAcknowledged` sees the count after each acknowledgement (the failover test kills processes there).
 */
export async function runMixedLoad(
  party: LoadParty,
  options: { perKind: number; lanes: number; onAcknowledged?: (count: number) => void },
): Promise<LoadResult> {
  const queue = Array.from({ length: options.perKind }, () => OPERATION_KINDS).flat()
  const result: LoadResult = { acknowledged: [], retries: 0, unacknowledgedCredits: 0 }
  const lane = async () => {
    for (let kind = queue.shift(); kind !== undefined; kind = queue.shift()) {
      const done = await operate(party, kind, result)
      if (done) {
        result.acknowledged.push(done)
        options.onAcknowledged?.(result.acknowledged.length)
      }
    }
  }
  await Promise.all(Array.from({ length: options.lanes }, lane))
  return result
}

async function operate(
  party: LoadParty,
  kind: OperationKind,
  result: LoadResult,
): Promise<Acknowledgement | undefined> {
  const { client, walletId } = party
  const reference = randomUUID()
  const retried = () => result.retries++
  if (kind === 'wallet debit') {
    await acknowledged(
      () => client.post('/wallet/debit', { walletId, reference, amountKobo: 1_000, currency: 'NGN' }),
      [200],
      retried,
    )
  } else if (kind === 'wallet external send') {
    const payee = {
      destinationAccountNumber: PAYEE.accountNumber,
      destinationBankCode: PAYEE.bankCode,
      destinationAccountName: syntheticAccountName(PAYEE.bankCode, PAYEE.accountNumber),
    }
    await acknowledged(
      () =>
        client.post('/transfer/bank/customer', { walletId, reference, amountKobo: 1_500, currency: 'NGN', ...payee }),
      [200],
      retried,
    )
  } else if (kind === 'outbound submit') {
    const answer = await acknowledged(
      () =>
        client.post<{ id: string }>('/api/v1/rail/outbound', {
          clientReference: reference,
          amountKobo: 2_000,
          beneficiaryAccountNumber: PAYEE.accountNumber,
          beneficiaryBankCode: PAYEE.bankCode,
          beneficiaryAccountName: syntheticAccountName(PAYEE.bankCode, PAYEE.accountNumber),
          currency: 'NGN',
        }),
      [200, 202],
      retried,
    )
    return { kind, reference, id: answer.body.id }
  } else {
    // A payer's name of its own makes each request distinct: the simulator takes an identical signed request as a replay.
    const body = {
      virtualAccount: party.virtualAccount,
      amountKobo: 2_500,
      payerName: `Payer ${reference.slice(0, 8)}`,
    }
    let answer: RailResponse<{ sessionId: string }>
    try {
      answer = await client.post<{ sessionId: string }>('/api/v1/rail/sandbox/simulate-inbound-credit', body)
    } catch {
      result.unacknowledgedCredits++ // the answer was lost with its process, or never came
      return undefined
    }
    if (answer.status === 200) return { kind, reference: answer.body.sessionId }
    // 502 with outcome unknown: the sandbox bank's answer was lost, as when the API process serving
    // the bank is the one killed. The payer does not know whether it paid, as with a lost answer.
    const bankAnswerLost =
      answer.status === 502 && (answer.body as { details?: { outcome?: string } }).details?.outcome === 'unknown'
    if (answer.status !== 429 && answer.status !== 503 && !bankAnswerLost)
      throw new Error(`unexpected answer: ${answer.status} ${JSON.stringify(answer.body)}`)
    result.unacknowledgedCredits++ // refused while busy, or its outcome unknown: not counted as a payment
    return undefined
  }
  return { kind, reference }
}

/**
 * Sends a request until it is answered with one of `statuses`. A lost answer (connection reset by
 * a killed process) or a refusal to come back later (429, 503) is tried again; any other answer is
 * an error.
 */
export async function acknowledged<T>(
  send: () => Promise<RailResponse<T>>,
  statuses: number[],
  onRetry: () => void = () => {},
): Promise<RailResponse<T>> {
  let last = ''
  for (let attempt = 1; attempt <= ATTEMPTS_MAX; attempt++) {
    if (attempt > 1) {
      onRetry()
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt))
    }
    let answer: RailResponse<T>
    try {
      answer = await send()
    } catch (error) {
      last = String(error)
      continue
    }
    if (statuses.includes(answer.status)) return answer
    last = `${answer.status} ${JSON.stringify(answer.body)}`
    if (answer.status !== 429 && answer.status !== 503) throw new Error(`unexpected answer: ${last}`)
  }
  throw new Error(`no answer after ${ATTEMPTS_MAX} attempts: ${last}`)
}
