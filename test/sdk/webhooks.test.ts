// verifyWebhook on real deliveries: Rail's workers POST events to a real receiver, and the raw
// bodies and headers it recorded verify under both schemes — X-Rail-Signature and Standard
// Webhooks — with the partner's callback-signing secret and with an escrow webhookSecret, and
// agree with the Standard Webhooks library. Anything altered, old or signed otherwise is refused.
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyWebhook, WebhookVerificationError, type RailEventMap } from '../../packages/sdk/src/index.ts'
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.ts'
import { startSdkHarness, type SdkHarness } from './support.ts'

let harness: SdkHarness
let hook: Receiver

beforeAll(async () => {
  harness = await startSdkHarness()
  hook = await startReceiver()
})

afterAll(async () => {
  await hook?.close()
  await harness?.close()
})

async function deliveryOf(match: (body: Record<string, unknown>) => boolean, count = 1): Promise<ReceivedRequest[]> {
  const matching = () =>
    hook.requests.filter((request) => match(JSON.parse(request.rawBody) as Record<string, unknown>))
  const deadline = Date.now() + 45_000
  while (matching().length < count) {
    if (Date.now() > deadline) throw new Error('no delivery')
    await hook.waitForRequests(hook.requests.length + 1, 45_000).catch(() => undefined)
  }
  return matching()
}

const refused = (verify: () => unknown) => expect(verify).toThrow(WebhookVerificationError)

describe('verifyWebhook on real deliveries', () => {
  it('partner events: both schemes verify with the callback-signing secret, and so does the Standard Webhooks library', async () => {
    const { credentials, rail } = await harness.newPartner()
    const secret = credentials.callbackSigningSecret
    await rail.updateSettings({ body: { callbackUrl: hook.url } })
    const invoice = await rail.createInvoice({ body: { title: 'Rent', amountKobo: 100_000, publishOnCreate: true } })
    const [delivery] = await deliveryOf(
      (body) =>
        body['event'] === 'invoice.published' &&
        (body['data'] as { reference?: string }).reference === invoice.reference,
    )
    const { rawBody, headers } = delivery!
    expect(headers['x-rail-signature']).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(headers['webhook-signature']).toMatch(/^v1,/)

    const event = verifyWebhook<RailEventMap['invoice.published']>(rawBody, headers, secret)
    expect(event.event).toBe('invoice.published')
    expect(event.data.reference).toBe(invoice.reference)
    expect(event.id).toBe(headers['webhook-id'])
    expect(verifyWebhook(rawBody, headers, secret, { scheme: 'standard' }).id).toBe(event.id)
    expect(verifyWebhook(rawBody, headers, secret, { scheme: 'rail' }).id).toBe(event.id)
    expect(verifyWebhook(Buffer.from(rawBody), new Headers(headers as Record<string, string>), secret).id).toBe(
      event.id,
    )
    expect(new Webhook(secret).verify(rawBody, headers as Record<string, string>)).toEqual(event)

    // Altered, signed with another secret, old, or unsigned: refused.
    const altered = rawBody.replace('"Rent"', '"Rant"')
    refused(() => verifyWebhook(altered, headers, secret, { scheme: 'standard' }))
    refused(() => verifyWebhook(altered, headers, secret, { scheme: 'rail' }))
    const another = 'whsec_' + Buffer.from('another secret of 32 bytes long!').toString('base64')
    refused(() => verifyWebhook(rawBody, headers, another))
    refused(() => verifyWebhook(rawBody, headers, another, { scheme: 'rail' }))
    const signedAtS = Number(headers['webhook-timestamp'])
    refused(() => verifyWebhook(rawBody, headers, secret, { nowS: signedAtS + 301 }))
    expect(verifyWebhook(rawBody, headers, secret, { nowS: signedAtS + 299 }).id).toBe(event.id)
    refused(() =>
      verifyWebhook(rawBody, { ...headers, 'webhook-timestamp': String(signedAtS + 1) }, secret, { nowS: signedAtS }),
    )
    refused(() => verifyWebhook(rawBody, { 'content-type': 'application/json' }, secret))
    expect(() => verifyWebhook(rawBody, headers, '')).toThrow(TypeError)
  })

  it('during a callback-secret rotation, either secret of a list verifies', async () => {
    const { credentials, rail } = await harness.newPartner()
    await rail.updateSettings({ body: { callbackUrl: hook.url } })
    const invoice = await rail.createInvoice({ body: { title: 'Water', amountKobo: 50_000, publishOnCreate: true } })
    const [delivery] = await deliveryOf(
      (body) =>
        body['event'] === 'invoice.published' &&
        (body['data'] as { reference?: string }).reference === invoice.reference,
    )
    const older = 'whsec_' + Buffer.from('an older secret of 32 bytes long').toString('base64')
    for (const scheme of ['standard', 'rail'] as const) {
      expect(
        verifyWebhook(delivery!.rawBody, delivery!.headers, [older, credentials.callbackSigningSecret], { scheme })
          .event,
      ).toBe('invoice.published')
      refused(() => verifyWebhook(delivery!.rawBody, delivery!.headers, [older], { scheme }))
    }
  })

  it('a redelivery (redeliverEvent) is signed again at its own time over the same body', async () => {
    const { credentials, rail } = await harness.newPartner()
    await rail.updateSettings({ body: { callbackUrl: hook.url } })
    const invoice = await rail.createInvoice({ body: { title: 'Power', amountKobo: 70_000, publishOnCreate: true } })
    const isThisEvent = (body: Record<string, unknown>) =>
      body['event'] === 'invoice.published' && (body['data'] as { reference?: string }).reference === invoice.reference
    const [first] = await deliveryOf(isThisEvent)
    const eventId = String(first!.headers['webhook-id'])
    const redelivery = await rail.withResponse.redeliverEvent({ path: { id: eventId } })
    expect(redelivery.status).toBe(202)
    const [, second] = await deliveryOf(isThisEvent, 2)
    expect(second!.rawBody).toBe(first!.rawBody)
    for (const scheme of ['standard', 'rail'] as const)
      expect(verifyWebhook(second!.rawBody, second!.headers, credentials.callbackSigningSecret, { scheme }).id).toBe(
        eventId,
      )
  })

  it('escrow events: both schemes verify with the escrow webhookSecret (its UTF-8 bytes the Standard Webhooks key)', async () => {
    const { credentials, rail } = await harness.newPartner()
    const webhookSecret = 'escrow-secret-chosen-by-the-partner-0001'
    await rail.registerEscrowWebhook({ body: { webhookUrl: hook.url, webhookSecret } })
    const escrow = await rail.createEscrow({
      body: {
        type: 'services',
        amount: 80_000,
        currency: 'NGN',
        payerEmail: 'payer@example.com',
        recipientEmail: 'recipient@example.com',
        description: 'Tiling',
      },
    })
    await rail.cancelEscrow({ path: { ref: escrow.ref }, body: { reason: 'changed plans' } })
    const [delivery] = await deliveryOf(
      (body) => body['event'] === 'escrow.cancelled' && (body['data'] as { ref?: string }).ref === escrow.ref,
    )
    const { rawBody, headers } = delivery!

    const event = verifyWebhook<RailEventMap['escrow.cancelled']>(rawBody, headers, webhookSecret)
    expect(event.data).toEqual(expect.objectContaining({ ref: escrow.ref, status: 'cancelled' }))
    expect(verifyWebhook(rawBody, headers, webhookSecret, { scheme: 'rail' }).id).toBe(event.id)
    expect(
      new Webhook(Buffer.from(webhookSecret, 'utf8').toString('base64')).verify(
        rawBody,
        headers as Record<string, string>,
      ),
    ).toEqual(event)
    // The partner's callback secret does not sign escrow events that have their own secret.
    refused(() => verifyWebhook(rawBody, headers, credentials.callbackSigningSecret))
  })
})
