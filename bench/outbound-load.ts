// The load generator of bench:outbound, in a process of its own: BENCH_TRANSFERS signed
// `POST /api/v1/rail/outbound` submits from autocannon over BENCH_CONNECTIONS connections to
// BENCH_BASE_URL, as BENCH_KEY_ID; prints autocannon's result as JSON on stdout.
import { randomUUID } from 'node:crypto'
import autocannon from 'autocannon'
import { signRequest } from '../src/client/index.ts'
import { nuban } from '../src/nip/nuban.ts'

const baseUrl = process.env.BENCH_BASE_URL!
const credentials = { keyId: process.env.BENCH_KEY_ID!, signingSecret: process.env.BENCH_SIGNING_SECRET! }
const PATH = '/api/v1/rail/outbound'
let serial = 0

const result = await new Promise<autocannon.Result>((resolve, reject) => {
  autocannon(
    {
      url: baseUrl,
      connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
      amount: Number(process.env.BENCH_TRANSFERS ?? 10_000),
      requests: [
        {
          method: 'POST',
          path: PATH,
          setupRequest: (request: autocannon.Request) => {
            const account = nuban('058', String(100_000_000 + (serial++ % 899_999_999)).slice(0, 9))
            const body = JSON.stringify({
              clientReference: randomUUID(),
              amountKobo: 100 * (10 + Math.floor(Math.random() * 1_000)), // whole naira: never a magic amount of the sandbox bank
              beneficiaryAccountNumber: account,
              beneficiaryBankCode: '058',
              beneficiaryAccountName: 'Bench Beneficiary',
              currency: 'NGN',
            })
            const headers = signRequest({ ...credentials, method: 'POST', pathWithQuery: PATH, body })
            return { ...request, body, headers: { ...headers, 'content-type': 'application/json' } }
          },
        },
      ],
    },
    (error: Error | null, outcome: autocannon.Result) => (error ? reject(error) : resolve(outcome)),
  )
})
process.stdout.write(JSON.stringify(result))
