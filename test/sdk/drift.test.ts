// The SDK's generated files are what the generator makes of the document the server serves:
// a route, schema or operationId changed without `npm run sdk:generate` fails here.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CATALOGUE } from '../../src/platform/errors.ts'
import { generate, operationRows, type GeneratedFiles } from '../../packages/sdk/scripts/codegen.ts'
import { OPERATIONS, Rail } from '../../packages/sdk/src/index.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

let app: TestApp
let served: Record<string, unknown>
let generated: GeneratedFiles

beforeAll(async () => {
  app = await startTestApp()
  const response = await fetch(`${app.baseUrl}/openapi.json`)
  expect(response.status).toBe(200)
  served = (await response.json()) as Record<string, unknown>
  generated = await generate(served)
})

afterAll(async () => {
  await app?.close()
})

const committed = (name: keyof GeneratedFiles) =>
  readFileSync(new URL(`../../packages/sdk/src/generated/${name}`, import.meta.url), 'utf8')

describe('the SDK against the served OpenAPI document', () => {
  it.each(['openapi.ts', 'operations.ts'] as const)(
    'src/generated/%s is what npm run sdk:generate makes of /openapi.json',
    (name) => {
      expect(committed(name), `packages/sdk/src/generated/${name} is stale: run npm run sdk:generate`).toBe(
        generated[name],
      )
    },
  )

  it('has a method for every signed or API-key operation of the document, and for nothing else', () => {
    const partnerOperations = Object.keys(operationRows(served)).sort()
    expect(Object.keys(OPERATIONS).sort()).toEqual(partnerOperations)
    expect(partnerOperations.length).toBeGreaterThan(60)
    const rail = new Rail({ baseUrl: 'http://127.0.0.1:1', keyId: 'k', signingSecret: 's' }) as unknown as Record<
      string,
      unknown
    >
    for (const operationId of partnerOperations) expect(typeof rail[operationId], operationId).toBe('function')
  })

  it('makes a reference only for calls idempotent on one (Idempotent-Replayed with a reference field)', () => {
    const withReference = Object.entries(OPERATIONS)
      .filter(([, operation]) => operation.reference !== null)
      .map(([operationId, operation]) => `${operationId}.${operation.reference}`)
      .sort()
    expect(withReference).toEqual(
      [
        'createEscrow.reference',
        'createInvoice.reference',
        'createOutboundTransfer.clientReference',
        'createPaymentIntent.reference',
        'createRefund.reference',
        'createVirtualAccount.reference',
        'creditWallet.reference',
        'debitWallet.reference',
        'fundSandboxFloat.reference',
        'transferBetweenWallets.reference',
        'transferWalletToBank.reference',
      ].sort(),
    )
  })

  it('knows every error code the server has (RailErrorCode)', () => {
    const source = readFileSync(new URL('../../packages/sdk/src/errors.ts', import.meta.url), 'utf8')
    const declared = source.slice(source.indexOf('export type RailErrorCode'), source.indexOf('(string & {})'))
    const codes = [...declared.matchAll(/\| '([a-z_]+)'/g)].map((match) => match[1]).sort()
    expect(codes).toEqual(Object.keys(ERROR_CATALOGUE).sort())
  })
})
