// The `webhooks` of the partner document describe what Rail really delivers: real flows on the
// sandbox (a payment intent paid, an invoice published, part-paid and cancelled, a payout
// confirmed) deliver callbacks to a real receiver, and each body is valid against its documented
// schema, with every documented required header present.
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { payIn, startCollections, type CollectionsHarness, type EventBody } from '../collections/support.ts'
import { waitFor } from '../support/wait.ts'

type Json = Record<string, unknown>
interface Webhook {
  parameters: { name: string; required: boolean }[]
  requestBody: { content: { 'application/json': { schema: Json } } }
}
interface Document {
  webhooks: Record<string, { post: Webhook }>
  components: { schemas: Record<string, Json> }
}

let harness: CollectionsHarness
let client: RailClient
let document: Document

beforeAll(async () => {
  harness = await startCollections()
  const partner = await harness.app.newPartner()
  client = partner.client
  expect((await client.patch('/api/v1/rail/settings', { callbackUrl: harness.hook.url })).status).toBe(200)
  document = (await (await fetch(`${harness.app.baseUrl}/openapi.json`)).json()) as Document
}, 60_000)
afterAll(async () => {
  await harness?.close()
  await harness?.app.close()
})

/** The schema with every `#/components/schemas/…` reference replaced by what it names. */
function inlined(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inlined)
  if (typeof node !== 'object' || node === null) return node
  const reference = (node as { $ref?: string }).$ref
  if (typeof reference === 'string') return inlined(document.components.schemas[reference.split('/').pop()!])
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(value)]))
}

function delivered(): { body: EventBody; headers: Record<string, unknown> }[] {
  return harness.hook.requests.map((request) => ({
    body: JSON.parse(request.rawBody) as EventBody,
    headers: request.headers as Record<string, unknown>,
  }))
}

async function waitForEvent(type: string, count = 1): Promise<void> {
  await waitFor(
    () => delivered().filter(({ body }) => body.event === type).length >= count,
    45_000,
    `${type} delivered`,
  )
}

describe('webhooks as delivered', () => {
  it('every delivered callback matches its documented schema and headers', { timeout: 120_000 }, async () => {
    const intent = await client.post<{ virtualAccount: string }>('/api/v1/rail/payment/intent', {
      reference: 'oa-intent-1',
      amountKobo: 150_000,
    })
    expect(intent.status, JSON.stringify(intent.body)).toBe(200)
    await payIn(client, intent.body.virtualAccount, 150_000, { payerName: 'ADAEZE OKORO' })

    const invoice = await client.post<{ virtualAccount: string; reference: string }>('/api/v1/rail/invoice', {
      reference: 'oa-invoice-1',
      title: 'Website redesign',
      amountKobo: 90_000,
      publishOnCreate: true,
    })
    expect(invoice.status, JSON.stringify(invoice.body)).toBe(200)
    await payIn(client, invoice.body.virtualAccount, 30_000)
    await waitForEvent('invoice.partially_paid')
    expect((await client.post('/api/v1/rail/invoice/oa-invoice-1/cancel', {})).status).toBe(200)

    expect(
      (await client.post('/api/v1/rail/sandbox/fund-float', { amountKobo: 1_000_000, reference: 'oa-float-1' })).status,
    ).toBe(200)
    const payout = {
      clientReference: 'oa-payout-1',
      beneficiaryAccountNumber: '0123456785',
      beneficiaryBankCode: '058',
      beneficiaryAccountName: 'CHUKWUEMEKA OKAFOR',
      amountKobo: 200_000,
      currency: 'NGN',
    }
    expect((await client.post('/api/v1/rail/outbound', payout)).status).toBe(202)
    await waitFor(
      async () =>
        (
          await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
            clientReference: 'oa-payout-1',
            outcome: 'confirmed',
          })
        ).status === 200,
      45_000,
      'payout submitted',
    )

    for (const type of ['credit.confirmed', 'invoice.published', 'invoice.cancelled', 'transfer.confirmed'])
      await waitForEvent(type)

    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    const types = new Set<string>()
    for (const { body, headers } of delivered()) {
      types.add(body.event)
      const webhook = document.webhooks[body.event]?.post
      expect(webhook, `${body.event} is documented`).toBeDefined()
      const validate = ajv.compile(inlined(webhook!.requestBody.content['application/json'].schema) as Json)
      expect(validate(body) ? [] : validate.errors, `${body.event} ${JSON.stringify(body).slice(0, 300)}`).toEqual([])
      for (const parameter of webhook!.parameters.filter((candidate) => candidate.required))
        expect(headers[parameter.name], `${body.event} header ${parameter.name}`).toBeTruthy()
    }
    expect([...types]).toEqual(
      expect.arrayContaining([
        'credit.confirmed',
        'invoice.published',
        'invoice.partially_paid',
        'invoice.cancelled',
        'transfer.confirmed',
      ]),
    )
  })
})
