// @rail/sdk as a partner installs it: built by its own build (tsc, as `npm pack` does), laid
// out under a consumer's node_modules, imported by name from plain JavaScript and called against
// the real server, and type-checked from a TypeScript consumer. It has no runtime dependency:
// nothing but Node's own modules and its own files.
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSdkHarness, type SdkHarness } from './support.ts'

const run = promisify(execFile)
const SDK = path.resolve(import.meta.dirname, '../../packages/sdk')
const TSC = path.resolve(import.meta.dirname, '../../node_modules/typescript/bin/tsc')

let harness: SdkHarness
let consumer: string

beforeAll(async () => {
  harness = await startSdkHarness()
  consumer = mkdtempSync(path.join(os.tmpdir(), 'rail-sdk-consumer-'))
  const installed = path.join(consumer, 'node_modules/@rail/sdk')
  mkdirSync(installed, { recursive: true })
  await run(process.execPath, [
    TSC,
    '-p',
    path.join(SDK, 'tsconfig.build.json'),
    '--outDir',
    path.join(installed, 'dist'),
  ])
  cpSync(path.join(SDK, 'package.json'), path.join(installed, 'package.json'))
  writeFileSync(
    path.join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  )
}, 180_000)

afterAll(async () => {
  if (consumer) rmSync(consumer, { recursive: true, force: true })
  await harness?.close()
})

describe('the package', () => {
  it("in this repository, npm install builds it: imported by name from the project's root, as the README's examples do", async () => {
    const script =
      "const sdk = await import('@rail/sdk'); console.log(JSON.stringify({ rail: typeof sdk.Rail, verify: typeof sdk.verifyWebhook, from: import.meta.resolve('@rail/sdk') }))"
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: path.resolve(SDK, '../..'),
    })
    const answer = JSON.parse(stdout) as { rail: string; verify: string; from: string }
    expect([answer.rail, answer.verify]).toEqual(['function', 'function'])
    expect(answer.from).toMatch(/\/packages\/sdk\/dist\/index\.js$/)
  })

  it('declares no runtime dependency, and its sources import only node: modules and its own files', () => {
    const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as Record<string, unknown>
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies'])
      expect(manifest[field], field).toBeUndefined()
    const sources = readdirSync(path.join(SDK, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    )
    const imported = sources.flatMap((file) =>
      [...readFileSync(path.join(SDK, 'src', file), 'utf8').matchAll(/^(?:import|export)[^'"\n]*from '([^']+)'/gm)].map(
        (match) => match[1]!,
      ),
    )
    expect(imported.length).toBeGreaterThan(10)
    expect(imported.filter((specifier) => !specifier.startsWith('./') && !specifier.startsWith('node:'))).toEqual([])
  })

  it('imported by name from JavaScript, the built package calls the real server and verifies nothing it should not', async () => {
    const { credentials } = await harness.newPartner()
    const script = path.join(consumer, 'call.mjs')
    writeFileSync(
      script,
      [
        "import { Rail, RailNotFoundError, verifyWebhook, WebhookVerificationError } from '@rail/sdk'",
        'const [baseUrl, keyId, signingSecret] = process.argv.slice(2)',
        'const rail = new Rail({ baseUrl, keyId, signingSecret })',
        'const settings = await rail.getSettings()',
        'const intent = await rail.createPaymentIntent({ body: { amountKobo: 10_000, currency: "NGN" } })',
        'const missing = await rail.getPaymentIntent({ path: { id: "00000000-0000-4000-8000-000000000000" } }).catch((error) => error)',
        '// A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).',
        'for (const deadline = Date.now() + 60_000; (await rail.listPaymentIntents({ query: { limit: 100 } })).data.length === 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 25))',
        'const pages = []',
        'for await (const item of rail.listPaymentIntents({ query: { limit: 1 } })) pages.push(item.id)',
        'let refused = false',
        'try { verifyWebhook("{}", { "x-rail-signature": "sha256=00" }, "secret") } catch (error) { refused = error instanceof WebhookVerificationError }',
        'console.log(JSON.stringify({ partnerId: settings.partnerId, reference: intent.reference, notFound: missing instanceof RailNotFoundError, pages, refused }))',
      ].join('\n'),
    )
    const { stdout } = await run(
      process.execPath,
      [script, harness.app.baseUrl, credentials.keyId, credentials.signingSecret],
      { cwd: consumer },
    )
    const result = JSON.parse(stdout) as {
      partnerId: string
      reference: string
      notFound: boolean
      pages: string[]
      refused: boolean
    }
    expect(result).toEqual({
      partnerId: credentials.partnerId,
      reference: expect.stringMatching(/^sdk_/),
      notFound: true,
      pages: [expect.any(String)],
      refused: true,
    })
  })

  it(
    'its declarations type-check a TypeScript consumer, and refuse a call missing what the operation needs',
    { timeout: 120_000 },
    async () => {
      writeFileSync(
        path.join(consumer, 'consumer.ts'),
        [
          "import { Rail, RailApiError, verifyWebhook, type Schemas } from '@rail/sdk'",
          "const rail = new Rail({ baseUrl: 'http://127.0.0.1:8080', keyId: 'k', signingSecret: 's' })",
          "export async function payout(): Promise<Schemas['OutboundTransfer']> {",
          "  return rail.createOutboundTransfer({ body: { beneficiaryAccountNumber: '0123456789', beneficiaryBankCode: '058', beneficiaryAccountName: 'ADA OBI', amountKobo: 500_000, currency: 'NGN' } })",
          '}',
          'export async function states(): Promise<string[]> {',
          '  const states: string[] = []',
          '  for await (const transfer of rail.listOutboundTransfers()) states.push(transfer.state)',
          '  return states',
          '}',
          'export function kind(raw: string, headers: Record<string, string>): string {',
          "  const event = verifyWebhook(raw, headers, 'whsec_x')",
          "  if (event.event === 'transfer.confirmed') return event.data.clientReference",
          '  return event.event',
          '}',
          'export function code(error: unknown): string | undefined {',
          '  return error instanceof RailApiError ? error.error : undefined',
          '}',
          '// @ts-expect-error: the transfer id is required',
          'void rail.getOutboundTransfer({ path: {} })',
        ].join('\n'),
      )
      const options = [
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        'node',
        '--typeRoots',
        path.resolve(import.meta.dirname, '../../node_modules/@types'),
        'consumer.ts',
      ]
      await expect(run(process.execPath, [TSC, ...options], { cwd: consumer })).resolves.toBeDefined()
    },
  )
})
