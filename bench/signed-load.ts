// What the load generators of bench:outbound and bench:wallets share: in a process of their own,
// every request built and signed before the run (on this two-core machine the generator's CPU is
// the API's loss), sent by autocannon over BENCH_CONNECTIONS connections to BENCH_BASE_URL as
// BENCH_KEY_ID; BENCH_WARMUP requests first, not measured; then BENCH_TRANSFERS measured. Prints
// autocannon's result, the seconds from the start to the last answer, and this process's CPU time,
// as JSON on stdout.
import autocannon from 'autocannon'
import { signRequest } from '../src/client/index.ts'

export interface Prepared {
  body: string
  headers: Record<string, string>
}

const baseUrl = process.env.BENCH_BASE_URL!
const credentials = { keyId: process.env.BENCH_KEY_ID!, signingSecret: process.env.BENCH_SIGNING_SECRET! }
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)

/** `count` POST requests to `path`, each body made by `bodyOf`, signed now as BENCH_KEY_ID. */
export function prepareSigned(path: string, bodyOf: () => unknown, count: number): Prepared[] {
  return Array.from({ length: count }, () => {
    const body = JSON.stringify(bodyOf())
    const headers = signRequest({ ...credentials, method: 'POST', pathWithQuery: path, body })
    return { body, headers: { ...headers, 'content-type': 'application/json' } }
  })
}

/** Runs the warm-up and the measured requests of `path`, each body made by `bodyOf`, and prints the result. */
export async function runSignedLoad(path: string, bodyOf: () => unknown): Promise<void> {
  const prepare = (count: number) => prepareSigned(path, bodyOf, count)
  const warmup = Number(process.env.BENCH_WARMUP ?? 0)
  if (warmup > 0) await send(path, prepare(warmup))
  const measured = prepare(Number(process.env.BENCH_TRANSFERS ?? 10_000))
  const cpuBefore = process.cpuUsage()
  const result = await send(path, measured)
  const cpu = process.cpuUsage(cpuBefore)
  process.stdout.write(JSON.stringify({ ...result, loadGeneratorCpuMs: (cpu.user + cpu.system) / 1000 }))
}

/**
 * autocannon's own `duration` and `requests.average` are whole seconds (it notices that the amount
 * is reached at its next one-second tick), so the measured time is from the start to the last
 * response, taken here.
 */
function send(path: string, prepared: Prepared[]): Promise<autocannon.Result & { measuredSeconds: number }> {
  let next = 0
  const startedAt = performance.now()
  let lastResponseAt = startedAt
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl,
        connections,
        amount: prepared.length,
        requests: [
          {
            method: 'POST',
            path,
            setupRequest: (request: autocannon.Request) => ({ ...request, ...prepared[next++ % prepared.length]! }),
          },
        ],
      },
      (error: Error | null, outcome: autocannon.Result) =>
        error ? reject(error) : resolve({ ...outcome, measuredSeconds: (lastResponseAt - startedAt) / 1000 }),
    )
    instance.on('response', () => (lastResponseAt = performance.now()))
    if (process.env.BENCH_VERBOSE === '1')
      (instance as unknown as NodeJS.EventEmitter).on('tick', (counter: { counter: number }) =>
        process.stderr.write(`  ${counter.counter} requests in the last second\n`),
      )
  })
}
