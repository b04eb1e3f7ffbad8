// A runnable walk through the escrow API (docs/escrow.md) against `npm start`:
//
//   npm start                      # in one terminal: API, workers, sandbox bank, embedded database
//   npm run example:escrow         # in another
//
// It uses the sandbox partner that `npm start` saved in its data directory (sandbox-partner.json), starts a
// local webhook receiver that verifies X-Rail-Signature with node:crypto only, registers it, and
// walks the remittance flow: create an escrow (with an idempotency reference) and replay it, see
// release refused before funding, fund it — the sender pays into the `funding` virtual account,
// here through the sandbox bank (POST /api/v1/rail/sandbox/simulate-inbound-credit) — wait for the
// signed escrow.funded event, and release it once identity is verified at the operator
// (escrow.released). A second escrow is cancelled (escrow.cancelled).
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { RailClient } from '../src/client/index.ts'
import { sandboxPartnerFile } from '../src/partners/sandbox-file.ts'
import { runningApiUrl } from '../src/platform/embedded-db.ts'

// Where `npm start` keeps its data (RAIL_DATA_DIR, default .rail): the address it serves and its sandbox partner.
const dataDir = path.resolve(process.env.RAIL_DATA_DIR ?? '.rail')
const base = process.env.RAIL_URL ?? runningApiUrl(dataDir) ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`
const credentialsFile = process.env.RAIL_CREDENTIALS_FILE ?? sandboxPartnerFile(dataDir)
if (!existsSync(credentialsFile)) {
  console.error(
    `No sandbox partner at ${credentialsFile}: start Rail with \`npm start\` first (or set RAIL_CREDENTIALS_FILE).`,
  )
  process.exit(1)
}
const credentials = JSON.parse(readFileSync(credentialsFile, 'utf8')) as {
  escrowApiKey: string
  keyId: string
  signingSecret: string
  partnerId: string
}
const apiKey = credentials.escrowApiKey
const rail = new RailClient(base, credentials)
const webhookSecret = `example-${randomUUID()}`

/** docs/contracts/escrow.md §Webhooks: sha256= + lowercase hex HMAC-SHA256 of the raw body keyed with the secret, compared in constant time. */
function verified(rawBody: Buffer, header: string | undefined): boolean {
  if (!header) return false
  const expected = Buffer.from('sha256=' + createHmac('sha256', webhookSecret).update(rawBody).digest('hex'))
  const given = Buffer.from(header)
  return expected.length === given.length && timingSafeEqual(expected, given)
}

const events: { event: string; data: unknown; metadata: unknown }[] = []
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const raw = Buffer.concat(chunks)
    if (!verified(raw, request.headers['x-rail-signature'] as string | undefined)) {
      console.log('receiver: signature mismatch → 401')
      response.writeHead(401).end()
      return
    }
    const body = JSON.parse(raw.toString('utf8')) as { event: string; data: unknown; metadata: unknown }
    events.push(body)
    console.log(`receiver: ${body.event} verified →`, JSON.stringify({ data: body.data, metadata: body.metadata }))
    response.writeHead(200).end('ok')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/escrow-events`

async function waitForEvent(name: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!events.some((event) => event.event === name) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100))
  if (!events.some((event) => event.event === name))
    throw new Error(`no ${name} event within 20 s (are the workers running? \`npm start\` runs them)`)
}

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; replayed: boolean; body: unknown }> {
  const response = await fetch(`${base}/api/v1/escrow/partner${path}`, {
    method,
    headers: { 'X-API-Key': apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  const result = {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    body: text ? JSON.parse(text) : undefined,
  }
  console.log(
    `${method} ${path} → ${result.status}${result.replayed ? ' (Idempotent-Replayed)' : ''}`,
    JSON.stringify(result.body),
  )
  return result
}

try {
  // 1. Register the webhook (a sandbox partner may use a loopback http receiver; live needs https).
  const registered = await call('POST', '/webhook', { webhookUrl: hookUrl, webhookSecret })
  if (registered.status === 401) {
    throw new Error(
      `the escrow API key in ${credentialsFile} is no longer valid (rotated on the dashboard, or revoked): rotate it with \`npx rail partner rotate-api-key --partner ${credentials.partnerId}\`, which updates that file`,
    )
  }
  if (registered.status !== 200) throw new Error(`registering the webhook answered ${registered.status}`)

  // 2. Create: a remittance payout held until the beneficiary's identity is verified at an operator.
  const create = {
    type: 'conditional',
    amount: 2_500_000,
    currency: 'NGN',
    payerEmail: 'sender@example.com',
    recipientEmail: 'beneficiary@example.com',
    description: 'Remittance to Ada Obi, cash pickup at an operator',
    ttlHours: 48,
    metadata: { remittanceId: 'RMT-0001', pickupOperator: 'Lagos Island branch' },
    reference: `remittance-${randomUUID()}`,
  }
  const created = (await call('POST', '/create', create)).body as { ref: string; funding: { virtualAccount: string } }
  await call('POST', '/create', create) // the same reference and body: the same escrow, replayed
  console.log('the sender pays into', created.funding.virtualAccount)

  // 3. Release is refused before funding (400 invalid_escrow_status).
  await call('PATCH', `/${created.ref}/release`, { reason: 'identity verified at operator' })

  // 4. Fund: the sender's bank transfer to the funding account (sandbox: the sandbox bank receives
  //    it and announces it to Rail, which moves it into escrow holding).
  const paid = await rail.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
    virtualAccount: created.funding.virtualAccount,
    amountKobo: create.amount,
    payerName: 'SENDER ABROAD',
  })
  console.log(`simulate-inbound-credit → ${paid.status}`, JSON.stringify(paid.body))
  await waitForEvent('escrow.funded')
  await call('GET', `/${created.ref}`)

  // 5. Identity verified at the operator: release (no destination: the amount goes to the partner's float, from which the operator pays cash).
  await call('PATCH', `/${created.ref}/release`, { reason: 'identity verified at operator' })
  await waitForEvent('escrow.released')

  // 6. Another remittance the sender withdraws: cancelled (nothing was funded, nothing to refund).
  const withdrawn = (await call('POST', '/create', { ...create, reference: `remittance-${randomUUID()}` })).body as {
    ref: string
  }
  await call('PATCH', `/${withdrawn.ref}/cancel`, { reason: 'sender withdrew the remittance' })
  await waitForEvent('escrow.cancelled')
  console.log('done: every event arrived signed and verified')
} catch (error) {
  console.error(`example:escrow: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  receiver.close()
}
