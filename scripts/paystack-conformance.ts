// The conformance check of Rail's Paystack adapter and the sandbox's /sandbox-paystack dialect
// against Paystack's published OpenAPI description (docs/conformance.md):
//
//   npm run conformance:paystack -- --spec /path/to/paystack.yaml [--report report.json]
//
// It starts Rail (an embedded PostgreSQL, the API with the sandbox bank and its dialects, the
// background workers) with a validating proxy (src/banking/providers/conformance/) between Rail and its own
// sandbox: every request the adapter sends and every answer the dialect gives passes through it and
// is checked against the description. It drives every operation the adapter makes, captures the
// webhooks the dialect sends to Rail, prints every violation and every request that matches no
// operation, and exits 1 if there is any (2 if the check could not run to its end).
import { randomBytes, randomUUID } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { Runner } from 'graphile-worker'
import { parse as parseYaml } from 'yaml'
import { buildApi, startBackgroundWorkers } from '../src/app.ts'
import { RailClient, signRequest } from '../src/client/index.ts'
import { nuban } from '../src/banking/nip/nuban.ts'
import { createPartner } from '../src/partners/service.ts'
import { systemClock } from '../src/platform/clock.ts'
import { createPool, withTransaction, type Pool } from '../src/platform/db.ts'
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/platform/embedded-db.ts'
import type { HttpServer } from '../src/platform/http.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import type { ForwardedExchange } from '../src/banking/providers/conformance/forward.ts'
import {
  formatViolation,
  startValidatingProxy,
  type ValidatingProxy,
} from '../src/banking/providers/conformance/proxy.ts'
import { ProviderHttp } from '../src/banking/providers/http.ts'
import { PaystackAdapter } from '../src/banking/providers/paystack/adapter.ts'
import { SandboxAdapter } from '../src/banking/providers/sandbox-adapter.ts'
import { getProvider, setPartnerRoutes } from '../src/banking/providers/service.ts'
import type { ProviderResult } from '../src/banking/providers/types.ts'
import { sandboxPaystackSecretKey } from '../src/sandbox/dialect-credentials.ts'
import { SANDBOX_PAYSTACK_PREFIX, SANDBOX_PAYSTACK_PROFILE } from '../src/sandbox/dialects.ts'

/** How long a step waits for a state (a settled payout, a listed credit, a webhook) before the check gives up on it. */
const WAIT_LIMIT_MS = 60_000
const POLL_INTERVAL_MS = 200
/** The webhooks the dialect is driven to send: each is waited for. */
const WEBHOOK_EVENTS = ['charge.success', 'transfer.success', 'transfer.failed', 'transfer.reversed'] as const
/** A beneficiary at GTBank (058) with a valid NUBAN, and the same with a wrong check digit. */
const PAYEE = { bankCode: '058', accountNumber: nuban('058', '246813579') }
const PAYEE_BAD_CHECK_DIGIT = {
  bankCode: '058',
  accountNumber: `${PAYEE.accountNumber.slice(0, 9)}${(Number(PAYEE.accountNumber[9]) + 1) % 10}`,
}
/** A payout amount the sandbox bank refuses at once with 51 (a magic amount, src/sandbox/magic.ts). */
const REFUSED_51_AMOUNT_KOBO = 259_051

interface Webhook {
  event: string
  body: string
}

interface Step {
  name: string
  result: string
  ok: boolean
}

interface Bench {
  embedded: EmbeddedDatabase
  dataDir: string
  pool: Pool
  api: HttpServer
  workers: Runner
  proxy: ValidatingProxy
  webhooks: Webhook[]
  bankSecret: string
  masterKey: Buffer
  appUrl: string
}

function readArguments(): { specPath: string; reportPath: string | undefined } {
  const { values } = parseArgs({ options: { spec: { type: 'string' }, report: { type: 'string' } } })
  if (!values.spec) {
    console.error(
      'usage: npm run conformance:paystack -- --spec /path/to/paystack.yaml (or .json) [--report report.json]',
    )
    process.exit(2)
  }
  return { specPath: path.resolve(values.spec), reportPath: values.report && path.resolve(values.report) }
}

function readDescription(specPath: string): Record<string, unknown> {
  const text = readFileSync(specPath, 'utf8')
  const parsed: unknown = specPath.endsWith('.json') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: -1 })
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${specPath} is not an OpenAPI document`)
  return parsed as Record<string, unknown>
}

/** Rail on a throw-away database, reaching its own sandbox (and its dialects' webhooks reaching it) through the validating proxy. */
async function startBench(document: Record<string, unknown>): Promise<Bench> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-conformance-'))
  chmodSync(dataDir, 0o755) // as root, PostgreSQL runs as the postgres user and must enter it
  const embedded = await startEmbeddedDatabase(dataDir, {
    persistent: false,
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
  })
  const pool = createPool(embedded.databaseUrl, 20)
  await migrateDatabase(pool)
  const bankSecret = randomBytes(16).toString('hex')
  const masterKey = randomBytes(32)
  let proxyUrl = ''
  const providers = { sandboxBankUrl: () => proxyUrl, sandboxBankSecret: bankSecret }
  const api = await buildApi({
    pool,
    masterKey,
    sandboxBank: { secret: bankSecret },
    providers,
    allowLoopbackCallbacks: true,
  })
  await api.listen({ host: '127.0.0.1', port: 0 })
  const address = api.server.address()
  const appUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const webhooks: Webhook[] = []
  const captureWebhook = (exchange: ForwardedExchange) => {
    if (exchange.request.path !== `/providers/${SANDBOX_PAYSTACK_PROFILE}/webhooks`) return
    const event = eventOf(exchange.request.body)
    if (!webhooks.some((webhook) => webhook.body === exchange.request.body))
      webhooks.push({ event, body: exchange.request.body })
  }
  // The dialect is checked; the sandbox bank's own API and Rail's webhook route beside it pass unchecked.
  const proxy = await startValidatingProxy({
    document,
    targetBaseUrl: appUrl,
    basePath: SANDBOX_PAYSTACK_PREFIX,
    forwardOutsideBasePath: true,
    observe: captureWebhook,
  })
  proxyUrl = proxy.url
  const workers = await startBackgroundWorkers({
    pool,
    masterKey,
    concurrency: 4,
    providers,
    events: { allowLoopbackCallbacks: true },
  })
  return { embedded, dataDir, pool, api, workers, proxy, webhooks, bankSecret, masterKey, appUrl }
}

async function stopBench(bench: Bench): Promise<void> {
  await bench.workers.stop()
  await bench.proxy.close()
  await bench.api.close()
  await bench.pool.end()
  await bench.embedded.stop()
  rmSync(bench.dataDir, { recursive: true, force: true })
}

function eventOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { event?: unknown }
    return typeof parsed.event === 'string' ? parsed.event : '(no event)'
  } catch {
    return '(not JSON)'
  }
}

function describeResult(result: ProviderResult<unknown>): string {
  if (result.outcome === 'unknown') return `unknown: ${result.error}`
  const value = result.outcome === 'successful' && result.value !== null ? ` ${JSON.stringify(result.value)}` : ''
  return `${result.outcome} ${result.responseCode} ${result.responseMessage}${'reversed' in result && result.reversed ? ' (reversed)' : ''}${value}`
}

/** Polls until `read` gives a value `done` accepts, or the limit passes (then the last value). */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_LIMIT_MS
  let value = await read()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
    value = await read()
  }
  return value
}

async function drive(bench: Bench): Promise<Step[]> {
  const steps: Step[] = []
  const step = (
    name: string,
    result: ProviderResult<unknown>,
    expected: (result: ProviderResult<unknown>) => boolean,
  ) => {
    steps.push({ name, result: describeResult(result), ok: expected(result) })
    return result
  }
  const profile = await getProvider(bench.pool, SANDBOX_PAYSTACK_PROFILE)
  const adapter = new PaystackAdapter({
    profile,
    baseUrl: `${bench.proxy.url}${SANDBOX_PAYSTACK_PREFIX}`,
    secrets: { secretKey: sandboxPaystackSecretKey(bench.bankSecret) },
    http: new ProviderHttp({ provider: profile.name, pool: bench.pool }),
    pool: bench.pool,
    clock: systemClock,
    session: new Map(),
  })
  const bank = new SandboxAdapter({
    provider: profile.name,
    baseUrl: bench.appUrl,
    secret: bench.bankSecret,
    pool: bench.pool,
  })
  const is = (outcome: string, code?: string) => (result: ProviderResult<unknown>) =>
    result.outcome === outcome && (code === undefined || ('responseCode' in result && result.responseCode === code))

  step('name enquiry of a valid account', await adapter.nameEnquiry(PAYEE), is('successful'))
  step(
    'name enquiry of an account with a wrong check digit',
    await adapter.nameEnquiry(PAYEE_BAD_CHECK_DIGIT),
    is('failed'),
  )
  step(
    'name enquiry at an unknown bank code',
    await adapter.nameEnquiry({ bankCode: '999', accountNumber: PAYEE.accountNumber }),
    is('failed'),
  )

  const pending = randomUUID()
  step(
    'payout (recipient made, transfer pending)',
    await adapter.payout({ reference: pending, amountKobo: 250_000, narration: 'conformance', ...destination() }),
    is('pending', '09'),
  )
  step(
    'payout again under the same reference (duplicate, then verify)',
    await adapter.payout({ reference: pending, amountKobo: 250_000, ...destination() }),
    is('pending', '09'),
  )
  // No record is 25, which the pipeline reads as not yet known (pending), never as failed.
  step('verify a reference Paystack never saw', await adapter.requery(randomUUID()), is('pending', '25'))
  step(
    'register the payout confirmed at the sandbox bank',
    await bank.registerPayoutOutcome(pending, 'confirmed'),
    is('successful'),
  )
  step(
    'verify the payout until it succeeds',
    await waitFor(() => adapter.requery(pending), is('successful')),
    is('successful', '00'),
  )
  const reversal = await reverseAtBank(bench, pending)
  steps.push({
    name: 'the sandbox bank reverses the settled payout',
    result: `${reversal.status} ${reversal.text}`,
    ok: reversal.status === 200,
  })
  step(
    'verify the reversed payout',
    await adapter.requery(pending),
    (result) => result.outcome === 'failed' && result.reversed === true,
  )
  const refused = randomUUID()
  step(
    'payout the bank refuses at once (51)',
    await adapter.payout({ reference: refused, amountKobo: REFUSED_51_AMOUNT_KOBO, ...destination() }),
    is('failed'),
  )
  step('verify the refused payout', await adapter.requery(refused), is('failed'))
  step('balance', await adapter.balance(), is('successful'))

  const direct = `conformance-${randomUUID()}`
  const allocated = step(
    'customer and dedicated account',
    await adapter.allocateVirtualAccount({ reference: direct, accountName: 'Ada Obi' }),
    is('successful'),
  )
  step(
    'customer and dedicated account again (the same account)',
    await adapter.allocateVirtualAccount({ reference: direct, accountName: 'Ada Obi' }),
    is('successful'),
  )
  if (allocated.outcome === 'successful')
    await creditAndList(adapter, bank, (allocated.value as { accountNumber: string }).accountNumber, step, is)
  await probeDialect(
    bench,
    steps,
    pending,
    allocated.outcome === 'successful' ? allocated.providerReference : undefined,
  )
  await deactivateThroughRail(bench, steps)
  return steps
}

/** The settlement simulator's reversal of a settled payout: the sandbox bank's route, signed with its secret as Rail's sandbox adapter signs. */
async function reverseAtBank(bench: Bench, reference: string): Promise<{ status: number; text: string }> {
  const pathWithQuery = `/sandbox-bank/v1/transfers/${encodeURIComponent(reference)}/reversal`
  const signed = signRequest({
    keyId: 'sandbox',
    signingSecret: bench.bankSecret,
    method: 'POST',
    pathWithQuery,
    body: '',
  })
  const headers = {
    'X-Sandbox-Timestamp': signed['X-Rail-Timestamp']!,
    'X-Sandbox-Signature': signed['X-Rail-Signature']!,
  }
  const response = await fetch(`${bench.appUrl}${pathWithQuery}`, { method: 'POST', headers })
  return { status: response.status, text: await response.text() }
}

/**
 * The dialect's routes the adapter does not call (fetching a transfer, a recipient, a dedicated
 * account, listing a customer's accounts) and their 404s, asked directly through the proxy with
 * the dialect's key: every answer /sandbox-paystack gives is checked, not only those the adapter reads.
 */
async function probeDialect(
  bench: Bench,
  steps: Step[],
  transferReference: string,
  allocation: string | undefined,
): Promise<void> {
  const base = `${bench.proxy.url}${SANDBOX_PAYSTACK_PREFIX}`
  const headers = { Authorization: `Bearer ${sandboxPaystackSecretKey(bench.bankSecret)}`, Accept: 'application/json' }
  const get = async (
    name: string,
    path: string,
    expectedStatus: number,
  ): Promise<Record<string, unknown> | undefined> => {
    const response = await fetch(`${base}${path}`, { headers })
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined
    steps.push({ name, result: `GET ${path} → ${response.status}`, ok: response.status === expectedStatus })
    return body
  }
  const verified = await get('the transfer, verified directly', `/transfer/verify/${transferReference}`, 200)
  const transfer = (verified?.data ?? {}) as { transfer_code?: string; recipient?: { recipient_code?: string } }
  await get('the transfer, fetched by its code', `/transfer/${transfer.transfer_code ?? 'none'}`, 200)
  await get('a transfer code never issued', '/transfer/TRF_000000000000000', 404)
  await get(
    'the recipient, fetched by its code',
    `/transferrecipient/${transfer.recipient?.recipient_code ?? 'none'}`,
    200,
  )
  const [customerId, dedicatedAccountId] = (allocation ?? ':').split(':')
  await get("the customer's active dedicated accounts", `/dedicated_account?active=true&customer=${customerId}`, 200)
  await get('the dedicated account, fetched by its id', `/dedicated_account/${dedicatedAccountId}`, 200)
  await get('a dedicated account never opened', '/dedicated_account/999999999', 404)
}

function destination(): { destinationBankCode: string; destinationAccountNumber: string } {
  return { destinationBankCode: PAYEE.bankCode, destinationAccountNumber: PAYEE.accountNumber }
}

type StepFunction = (
  name: string,
  result: ProviderResult<unknown>,
  expected: (result: ProviderResult<unknown>) => boolean,
) => ProviderResult<unknown>

/** A simulated inbound credit into the dedicated account (charge.success), then the transactions listed until it is there. */
async function creditAndList(
  adapter: PaystackAdapter,
  bank: SandboxAdapter,
  accountNumber: string,
  step: StepFunction,
  is: (outcome: string) => (result: ProviderResult<unknown>) => boolean,
): Promise<void> {
  const since = new Date(Date.now() - 60_000)
  step(
    'simulated inbound credit into the dedicated account',
    await bank.simulateInboundCredit({ accountNumber, amountKobo: 1_234_500, payerName: 'CHIOMA EZE' }),
    is('successful'),
  )
  const listed = await waitFor(
    () => adapter.listCredits(accountNumber, since),
    (result) => result.outcome === 'successful' && result.value.length > 0,
  )
  step(
    'transactions of the dedicated account (the credit listed)',
    listed,
    (result) => result.outcome === 'successful' && (result.value as unknown[]).length === 1,
  )
}

/**
 * Deactivation needs the account Rail recorded (the adapter reads its Paystack ids from Rail's
 * virtual account): a partner whose collections go through sandbox-paystack allocates one and
 * archives it over Rail's API, and Rail's registry makes the adapter's calls through the proxy.
 */
async function deactivateThroughRail(bench: Bench, steps: Step[]): Promise<void> {
  const credentials = await createPartner(bench.pool, bench.masterKey, {
    name: 'Conformance Partner',
    customerClass: 'fintech',
    environment: 'sandbox',
  })
  await withTransaction(bench.pool, (tx) =>
    setPartnerRoutes(tx, credentials.partnerId, { collections: [SANDBOX_PAYSTACK_PROFILE] }),
  )
  const client = new RailClient(bench.appUrl, credentials)
  const created = await client.post<{ trackingId?: string; virtualAccount?: string }>('/api/v1/rail/virtual-account', {
    reference: `conformance-${randomUUID()}`,
  })
  steps.push({
    name: 'virtual account allocated by Rail through sandbox-paystack',
    result: `${created.status} ${created.body.virtualAccount}`,
    ok: created.status === 200,
  })
  if (created.status !== 200 || !created.body.trackingId) return
  const archived = await client.post<{ status?: string }>(
    `/api/v1/rail/virtual-account/${created.body.trackingId}/archive`,
  )
  steps.push({
    name: 'virtual account archived by Rail',
    result: `${archived.status} ${archived.body.status}`,
    ok: archived.status === 200 && archived.body.status === 'archived',
  })
  // Rail tells the provider in a job: its call is the dedicated account's deactivation.
  const deactivation = () =>
    bench.proxy.exchanges.find(
      (exchange) => exchange.method === 'DELETE' && exchange.operation === 'dedicatedAccount_deactivate',
    )
  const seen = await waitFor(
    async () => deactivation(),
    (exchange) => exchange?.status === 200,
  )
  steps.push({
    name: "dedicated account deactivated (Rail's archive job)",
    result: seen ? `DELETE ${seen.path} → ${seen.status}` : 'no call',
    ok: seen?.status === 200,
  })
}

/** Waits for every webhook the scenario makes the dialect send; says which never came. */
async function awaitWebhooks(bench: Bench): Promise<string[]> {
  const missing = () => WEBHOOK_EVENTS.filter((event) => !bench.webhooks.some((webhook) => webhook.event === event))
  await waitFor(
    async () => missing(),
    (left) => left.length === 0,
  )
  return missing()
}

function printReport(bench: Bench, steps: Step[], webhookChecks: string[], missingWebhooks: string[]): void {
  console.log('\nSteps (what the adapter, or the dialect asked directly, answered):')
  for (const { name, result, ok } of steps) console.log(`  ${ok ? 'ok  ' : 'ODD '} ${name}: ${result}`)
  console.log(`\nExchanges checked: ${bench.proxy.exchanges.length}`)
  for (const exchange of bench.proxy.exchanges) {
    const body = exchange.responseBodyChecked ? '' : ' (answer body not described: not checked)'
    console.log(
      `  ${exchange.method} ${exchange.path}${exchange.query ? `?${exchange.query}` : ''} → ${exchange.status ?? 'no answer'} ${exchange.operation ?? '(no operation)'}: ${exchange.violations} violation(s)${body}`,
    )
  }
  console.log(
    `\nWebhooks captured: ${bench.webhooks.map((webhook) => webhook.event).join(', ') || 'none'}${missingWebhooks.length > 0 ? `; never sent: ${missingWebhooks.join(', ')}` : ''}`,
  )
  for (const line of webhookChecks) console.log(`  ${line}`)
  console.log(`\nRequests matching no operation: ${bench.proxy.unmatched.length}`)
  for (const request of bench.proxy.unmatched) console.log(`  ${request.method} ${request.path}: ${request.reason}`)
  console.log(`\nViolations: ${bench.proxy.violations.length}`)
  for (const violation of bench.proxy.violations) console.log(`  ${formatViolation(violation)}`)
}

/** The webhooks checked against the description's webhook schemas, if it has any. */
function checkWebhooks(bench: Bench): string[] {
  const { validator } = bench.proxy
  const names = validator.webhookNames()
  if (names.length === 0)
    return [
      'the description has no webhook or event schemas (no `webhooks`, no `x-webhooks`): the bodies are captured, not validated',
    ]
  const lines: string[] = []
  for (const webhook of bench.webhooks) {
    if (!names.includes(webhook.event)) {
      lines.push(`${webhook.event}: the description has no schema for this event`)
      continue
    }
    const found = validator.validateWebhook(webhook.event, webhook.body)
    bench.proxy.violations.push(...found)
    lines.push(`${webhook.event}: ${found.length} violation(s)`)
  }
  return lines
}

async function main(): Promise<number> {
  const { specPath, reportPath } = readArguments()
  const document = readDescription(specPath)
  console.log(`Checking against ${specPath} (OpenAPI ${String(document.openapi)})`)
  const bench = await startBench(document)
  try {
    const steps = await drive(bench)
    const missingWebhooks = await awaitWebhooks(bench)
    const webhookChecks = checkWebhooks(bench)
    printReport(bench, steps, webhookChecks, missingWebhooks)
    if (reportPath) {
      const report = {
        spec: specPath,
        steps,
        exchanges: bench.proxy.exchanges,
        unmatched: bench.proxy.unmatched,
        violations: bench.proxy.violations,
        webhooks: bench.webhooks,
        webhookChecks,
        missingWebhooks,
      }
      writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`)
    }
    const nonConforming = bench.proxy.violations.length + bench.proxy.unmatched.length
    const incomplete = steps.filter((step) => !step.ok).length + missingWebhooks.length
    if (incomplete > 0)
      console.log(`\n${incomplete} step(s) or webhook(s) did not go as the scenario expects: the check is incomplete`)
    console.log(
      nonConforming === 0
        ? '\nConforms: no violation.'
        : `\nDoes not conform: ${bench.proxy.violations.length} violation(s), ${bench.proxy.unmatched.length} request(s) matching no operation.`,
    )
    return nonConforming > 0 ? 1 : incomplete > 0 ? 2 : 0
  } finally {
    await stopBench(bench)
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error)
    process.exit(2)
  },
)
