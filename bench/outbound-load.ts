// The load generator of bench:outbound, in a process of its own: BENCH_TRANSFERS signed
// `POST /api/v1/rail/outbound` submits from autocannon over BENCH_CONNECTIONS connections to
// BENCH_BASE_URL, as BENCH_KEY_ID; prints autocannon's result (and this process's CPU time) as
// JSON on stdout. BENCH_WARMUP submits go first and are not measured: the figure is the API's
// steady state, not its JIT compiling and its database connections opening.
//
// Every request is built and signed before the run starts, so that the load generator spends the
// measured seconds sending, not hashing: on this two-core machine its CPU is the API's loss.
import { randomUUID } from 'node:crypto'
import autocannon from 'autocannon'
import { signRequest } from '../src/client/index.ts'
import { nuban } from '../src/nip/nuban.ts'
import { syntheticAccountName } from '../src/sandbox-bank/names.ts'

const baseUrl = process.env.BENCH_BASE_URL!
const credentials = { keyId: process.env.BENCH_KEY_ID!, signingSecret: process.env.BENCH_SIGNING_SECRET! }
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const PATH = process.env.BENCH_PATH ?? '/api/v1/rail/outbound'
let serial = 0

interface Prepared {
  body: string
  headers: Record<string, string>
}

function prepare(count: number): Prepared[] {
  return Array.from({ length: count }, () => {
    const account = nuban('058', String(100_000_000 + (serial++ % 899_999_999)).slice(0, 9))
    const body = JSON.stringify({
      clientReference: randomUUID(),
      amountKobo: 100 * (10 + Math.floor(Math.random() * 1_000)), // whole naira: never a magic amount of the sandbox bank
      beneficiaryAccountNumber: account,
      beneficiaryBankCode: '058',
      beneficiaryAccountName: syntheticAccountName('058', account), // the holder's name, as the bank answers it
      currency: 'NGN',
    })
    const headers = signRequest({ ...credentials, method: 'POST', pathWithQuery: PATH, body })
    return { body, headers: { ...headers, 'content-type': 'application/json' } }
  })
}

/**
 * autocannon's own `duration` and `requests.average` are whole seconds (it notices that the amount
 * is reached at its next one-second tick), so the measured time is from the start to the last
 * response, taken here.
 */
function send(prepared: Prepared[]): Promise<autocannon.Result & { measuredSeconds: number }> {
  let next = 0
  const startedAt = performance.now()
  let lastResponseAt = startedAt
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl,
        connections,
        amount: prepared.length,
        requests: [{ method: 'POST', path: PATH, setupRequest: (request: autocannon.Request) => ({ ...request, ...prepared[next++ % prepared.length]! }) }],
      },
      (error: Error | null, outcome: autocannon.Result) => (error ? reject(error) : resolve({ ...outcome, measuredSeconds: (lastResponseAt - startedAt) / 1000 })),
    )
    instance.on('response', () => (lastResponseAt = performance.now()))
    if (process.env.BENCH_VERBOSE === '1') (instance as unknown as NodeJS.EventEmitter).on('tick', (counter: { counter: number }) => process.stderr.write(`  ${counter.counter} requests in the last second\n`))
  })
}

const warmup = Number(process.env.BENCH_WARMUP ?? 0)
if (warmup > 0) await send(prepare(warmup))
const measured = prepare(Number(process.env.BENCH_TRANSFERS ?? 10_000))
const cpuBefore = process.cpuUsage()
const result = await send(measured)
const cpu = process.cpuUsage(cpuBefore)
process.stdout.write(JSON.stringify({ ...result, loadGeneratorCpuMs: (cpu.user + cpu.system) / 1000 }))
