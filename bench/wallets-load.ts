// The load generator of bench:wallets, in a process of its own (as bench:outbound's and the
// ceiling's): BENCH_TRANSFERS signed `POST /transfer/wallet` requests between random pairs of the
// wallets listed in BENCH_WALLETS_FILE (a JSON array of wallet ids), from autocannon over
// BENCH_CONNECTIONS connections to BENCH_BASE_URL, as BENCH_KEY_ID; BENCH_WARMUP requests first,
// not measured. Prints autocannon's result, the seconds from the start to the last answer, and
// this process's CPU time, as JSON on stdout.
//
// Every request is built and signed before the run starts: on this two-core machine the load
// generator's CPU is the API's loss, and the ceiling's load generator does the same.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { signRequest } from '../src/client/index.ts'

const PATH = '/transfer/wallet'
const baseUrl = process.env.BENCH_BASE_URL!
const credentials = { keyId: process.env.BENCH_KEY_ID!, signingSecret: process.env.BENCH_SIGNING_SECRET! }
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const wallets = JSON.parse(readFileSync(process.env.BENCH_WALLETS_FILE!, 'utf8')) as string[]

interface Prepared {
  body: string
  headers: Record<string, string>
}

function prepare(count: number): Prepared[] {
  return Array.from({ length: count }, () => {
    const from = wallets[Math.floor(Math.random() * wallets.length)]!
    let to = from
    while (to === from) to = wallets[Math.floor(Math.random() * wallets.length)]!
    // 1..1,000 kobo: never a magic amount of the sandbox bank (those end in 9xxx).
    const body = JSON.stringify({ walletId: from, destinationWalletId: to, reference: randomUUID(), amountKobo: 1 + Math.floor(Math.random() * 1_000), currency: 'NGN' })
    const headers = signRequest({ ...credentials, method: 'POST', pathWithQuery: PATH, body })
    return { body, headers: { ...headers, 'content-type': 'application/json' } }
  })
}

/** autocannon's own figures are whole seconds; the measured time runs from the start to the last answer. */
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
  })
}

const warmup = Number(process.env.BENCH_WARMUP ?? 0)
if (warmup > 0) await send(prepare(warmup))
const measured = prepare(Number(process.env.BENCH_TRANSFERS ?? 10_000))
const cpuBefore = process.cpuUsage()
const result = await send(measured)
const cpu = process.cpuUsage(cpuBefore)
process.stdout.write(JSON.stringify({ ...result, loadGeneratorCpuMs: (cpu.user + cpu.system) / 1000 }))
