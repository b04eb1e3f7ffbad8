// Typed errors: each refusal of the real server is thrown as the RailApiError subclass of its
// status, with the body's `error` and `details`, the request id, and the call's reference.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Rail,
  RailApiError,
  RailAuthenticationError,
  RailConflictError,
  RailInvalidRequestError,
  RailNotFoundError,
  signatureHeaders,
  type RailErrorCode,
} from '../../packages/sdk/src/index.ts'
import { startReceiver } from '../support/receiver.ts'
import { startSdkHarness, type SdkHarness } from './support.ts'

let harness: SdkHarness

beforeAll(async () => {
  harness = await startSdkHarness()
})

afterAll(async () => {
  await harness?.close()
})

async function refusal(call: PromiseLike<unknown>): Promise<RailApiError> {
  const outcome = await Promise.resolve(call).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(outcome).toBeInstanceOf(RailApiError)
  return outcome as RailApiError
}

function expectRefusal(error: RailApiError, type: typeof RailApiError, status: number, code: RailErrorCode): void {
  expect(error).toBeInstanceOf(type)
  expect(error.status).toBe(status)
  expect(error.error).toBe(code)
  expect(error.message).toEqual(expect.any(String))
  expect(error.requestId).toEqual(expect.any(String))
}

describe('typed errors from the real server', () => {
  it('401: a wrong signing secret, a wrong escrow API key', async () => {
    const { credentials } = await harness.newPartner()
    const forged = new Rail({
      baseUrl: harness.app.baseUrl,
      keyId: credentials.keyId,
      signingSecret: `${credentials.signingSecret}x`,
      escrowApiKey: `${credentials.escrowApiKey}x`,
    })
    expectRefusal(await refusal(forged.getSettings()), RailAuthenticationError, 401, 'unauthorized')
    expectRefusal(await refusal(forged.listEscrows()), RailAuthenticationError, 401, 'unauthorized')
  })

  it('404: another partner’s object is not found', async () => {
    const { rail: owner } = await harness.newPartner()
    const { rail: stranger } = await harness.newPartner()
    const intent = await owner.createPaymentIntent({ body: { amountKobo: 10_000, currency: 'NGN' } })
    const error = await refusal(stranger.getPaymentIntent({ path: { id: intent.id } }))
    expectRefusal(error, RailNotFoundError, 404, 'not_found')
    expect(error.operationId).toBe('getPaymentIntent')
  })

  it('422: a body the schema refuses names its fields in details.fields; the reference the SDK made is on the error', async () => {
    const { rail } = await harness.newPartner()
    const error = await refusal(rail.createPaymentIntent({ body: { amountKobo: -5, currency: 'NGN' } }))
    expectRefusal(error, RailInvalidRequestError, 422, 'validation_error')
    expect(error.details['fields']).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining('amountKobo') })]),
    )
    expect(error.reference).toMatch(/^sdk_/)
  })

  it('422: an amount above the largest instruction says the maximum in details', async () => {
    const { rail } = await harness.newPartner()
    const error = await refusal(rail.fundSandboxFloat({ body: { amountKobo: 25_000_000_001 } }))
    expectRefusal(error, RailInvalidRequestError, 422, 'amount_above_limit')
    expect(error.details).toEqual(expect.objectContaining({ maximumKobo: 25_000_000_000 }))
  })

  it('409: an invoice not in the state an action needs names its current state', async () => {
    const { rail } = await harness.newPartner()
    const invoice = await rail.createInvoice({ body: { title: 'Rent', amountKobo: 100_000 } })
    await rail.cancelInvoice({ path: { reference: invoice.reference } })
    const error = await refusal(rail.publishInvoice({ path: { reference: invoice.reference } }))
    expectRefusal(error, RailConflictError, 409, 'invalid_state')
    expect(error.details).toEqual(expect.objectContaining({ currentState: 'cancelled' }))
  })

  it('400: an escrow released before it is funded (X-API-Key)', async () => {
    const { rail } = await harness.newPartner()
    const escrow = await rail.createEscrow({
      body: {
        type: 'goods',
        amount: 50_000,
        currency: 'NGN',
        payerEmail: 'payer@example.com',
        recipientEmail: 'recipient@example.com',
        description: 'A bicycle',
      },
    })
    const error = await refusal(rail.releaseEscrow({ path: { ref: escrow.ref }, body: { reason: 'too early' } }))
    expectRefusal(error, RailInvalidRequestError, 400, 'invalid_escrow_status')
  })

  it('a call without the credentials it needs is refused before anything is sent', async () => {
    const { credentials } = await harness.newPartner()
    const signingOnly = new Rail({
      baseUrl: harness.app.baseUrl,
      keyId: credentials.keyId,
      signingSecret: credentials.signingSecret,
    })
    const escrowOnly = new Rail({ baseUrl: harness.app.baseUrl, escrowApiKey: credentials.escrowApiKey })
    await expect(signingOnly.listEscrows()).rejects.toThrow(/escrowApiKey/)
    await expect(escrowOnly.getSettings()).rejects.toThrow(/keyId, signingSecret/)
    expect(() => new Rail({ baseUrl: 'localhost:8080' })).toThrow(TypeError)
    expect(() => new Rail({ baseUrl: harness.app.baseUrl, keyId: credentials.keyId })).toThrow(TypeError)
  })

  it('a path parameter is encoded, and required', async () => {
    const { rail } = await harness.newPartner()
    const reference = `INV 2026/11 #7?${randomUUID().slice(0, 8)}`
    await rail.createInvoice({ body: { reference, title: 'Rent', amountKobo: 100_000 } })
    expect((await rail.getInvoice({ path: { reference } })).reference).toBe(reference)
    await expect(rail.getInvoice({ path: { reference: '' } })).rejects.toThrow(/path.reference/)
  })
})

describe('answers from something in between', () => {
  it('a redirect is not followed: the signed request goes nowhere else, and the 3xx is a RailApiError', async () => {
    const { credentials } = await harness.newPartner()
    const elsewhere = await startReceiver()
    const redirecting = await startReceiver()
    redirecting.answer = () => ({ status: 302, headers: { Location: `${elsewhere.url}/api/v1/rail/settings` } })
    try {
      const rail = new Rail({
        baseUrl: redirecting.url.replace('/hooks', ''),
        keyId: credentials.keyId,
        signingSecret: credentials.signingSecret,
      })
      const error = await refusal(rail.getSettings())
      expect([error.status, error.error]).toEqual([302, 'http_302'])
      expect(redirecting.requests).toHaveLength(1)
      expect(elsewhere.requests).toHaveLength(0)
    } finally {
      await redirecting.close()
      await elsewhere.close()
    }
  })
})

describe('request signing', () => {
  it('signs the worked example of docs/authentication.md', () => {
    const headers = signatureHeaders(
      { keyId: 'rk_kid_test_example', signingSecret: 'rk_sec_test_example' },
      1700000000,
      'POST',
      '/wallet/credit?x=1',
      '{"a":1}',
    )
    expect(headers).toEqual({
      'X-Rail-Key-Id': 'rk_kid_test_example',
      'X-Rail-Timestamp': '1700000000',
      'X-Rail-Signature': 'v1=370535b6f1a2dd61c80421d8185a81d81a7e0ad42b873024a5df7ab103af03f7',
    })
  })
})
