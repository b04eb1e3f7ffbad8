// Every example of the README's SDK section ("From TypeScript: the SDK"), run as written there against the real server with its workers and the sandbox bank, and the
// README's receiver (test/sdk/support.ts) verifying each callback. Only the addresses differ:
// the test app's and the receiver's ephemeral ports instead of 8080 and 9000.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Rail, RailApiError, RailConflictError, type RailWebhookEvent } from '../../packages/sdk/src/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { waitFor } from '../support/wait.ts'
import { startSdkHarness, startWebhookReceiver, type SdkHarness, type WebhookReceiver } from './support.ts'

let harness: SdkHarness
const receivers: WebhookReceiver[] = []

beforeAll(async () => {
  harness = await startSdkHarness()
})

afterAll(async () => {
  for (const receiver of receivers) await receiver.close()
  await harness?.close()
})

const escrowWebhookSecret = 'a secret of your own, 8 characters or more'

/** The README's set-up: a client from the partner's credentials, its callback URL, and the README's receiver. */
async function setUp(): Promise<{ partner: PartnerCredentials; rail: Rail; hooks: WebhookReceiver }> {
  const { credentials: partner } = await harness.newPartner()
  const hooks = await startWebhookReceiver([partner.callbackSigningSecret, escrowWebhookSecret])
  receivers.push(hooks)
  const rail = new Rail({
    baseUrl: harness.app.baseUrl,
    keyId: partner.keyId,
    signingSecret: partner.signingSecret,
    escrowApiKey: partner.escrowApiKey,
  })
  await rail.updateSettings({ body: { callbackUrl: hooks.url } })
  return { partner, rail, hooks }
}

type EventNamed<Name> = Extract<RailWebhookEvent, { event: Name }>

async function eventArrives<Name extends RailWebhookEvent['event']>(
  hooks: WebhookReceiver,
  name: Name,
  match: (event: EventNamed<Name>) => boolean,
): Promise<EventNamed<Name>> {
  const found = () =>
    hooks.events.find((event): event is EventNamed<Name> => event.event === name && match(event as EventNamed<Name>))
  await waitFor(() => found() !== undefined, 45_000, `${name} callback`)
  return found()!
}

describe('README: the SDK', () => {
  it(
    'pays out: float funded, the account name asked of the bank, a transfer with a reference made for it, settled; transfer.confirmed arrives verified',
    { timeout: 90_000 },
    async () => {
      const { rail, hooks } = await setUp()

      await rail.fundSandboxFloat({ body: { amountKobo: 5_000_000 } })
      const { accountName } = await rail.resolveBankAccount({ body: { bankCode: '058', accountNumber: '0001234560' } })
      const transfer = await rail.createOutboundTransfer({
        body: {
          beneficiaryAccountNumber: '0001234560',
          beneficiaryBankCode: '058',
          beneficiaryAccountName: accountName,
          amountKobo: 2_500_000,
          currency: 'NGN',
          narration: 'November rent',
        },
      })
      while ((await rail.getOutboundTransfer({ path: { id: transfer.id } })).state === 'pending')
        await new Promise((resolve) => setTimeout(resolve, 200))
      await rail.simulateOutboundSettlement({ body: { transferId: transfer.id, outcome: 'confirmed' } })

      expect(transfer.clientReference).toMatch(/^sdk_[0-9a-f-]{36}$/)
      const confirmed = await eventArrives(hooks, 'transfer.confirmed', (event) => event.data.id === transfer.id)
      expect(confirmed.data).toEqual(
        expect.objectContaining({
          state: 'confirmed',
          amountKobo: 2_500_000,
          clientReference: transfer.clientReference,
        }),
      )
      expect(await rail.getFloat()).toEqual(
        expect.objectContaining({ availableBalanceKobo: 2_500_000, bookedBalanceKobo: 2_500_000 }),
      )

      // Errors: the same reference with another amount is refused, typed.
      const error = await rail
        .createOutboundTransfer({
          body: {
            clientReference: transfer.clientReference,
            beneficiaryAccountNumber: '0001234560',
            beneficiaryBankCode: '058',
            beneficiaryAccountName: accountName,
            amountKobo: 3_000_000,
            currency: 'NGN',
          },
        })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        )
      expect(error).toBeInstanceOf(RailApiError)
      expect(error).toBeInstanceOf(RailConflictError)
      const conflict = error as RailApiError
      expect([conflict.status, conflict.error, conflict.details]).toEqual([
        409,
        'idempotency_conflict',
        { reference: transfer.clientReference, id: transfer.id },
      ])
      expect(conflict.requestId).toEqual(expect.any(String))

      // Lists: one page, and every transfer.confirmed event walked page by page.
      // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
      await waitFor(
        async () =>
          (await rail.listOutboundTransfers({ query: { limit: 100 } })).data.length === 1 &&
          (await rail.listEvents({ query: { type: 'transfer.confirmed', limit: 100 } })).data.length === 1,
        20_000,
        'the transfer and its transfer.confirmed event listed',
      )
      const page = await rail.listOutboundTransfers({ query: { limit: 10 } })
      expect(page.data.map((listed) => listed.id)).toEqual([transfer.id])
      expect(page.nextCursor).toBeNull()
      const confirmedEvents: string[] = []
      for await (const event of rail.listEvents({ query: { type: 'transfer.confirmed' } }))
        confirmedEvents.push(event.objectId)
      expect(confirmedEvents).toEqual([transfer.id])
      expect(hooks.refused).toBe(0)
    },
  )

  it(
    'collects: a payment intent paid into its virtual account; credit.confirmed arrives verified and the intent is paid',
    { timeout: 90_000 },
    async () => {
      const { rail, hooks } = await setUp()

      const intent = await rail.createPaymentIntent({
        body: { amountKobo: 1_500_000, currency: 'NGN', merchantDisplayName: 'Mama Put Foods' },
      })
      expect(
        `pay ₦15,000 into ${intent.virtualAccount} (${intent.virtualAccountBank}) or at ${intent.checkoutUrl}`,
      ).toMatch(/^pay ₦15,000 into \d{10} \(.+\) or at http/)
      await rail.simulateInboundCredit({
        body: { virtualAccount: intent.virtualAccount, amountKobo: 1_500_000, payerName: 'ADA OBI' },
      })

      expect(intent.reference).toMatch(/^sdk_/)
      const credit = await eventArrives(
        hooks,
        'credit.confirmed',
        (event) => event.data.virtualAccount === intent.virtualAccount,
      )
      expect(credit.data).toEqual(expect.objectContaining({ amountKobo: 1_500_000, objectType: 'payment_intent' }))
      expect((await rail.getPaymentIntent({ path: { id: intent.id } })).status).toBe('paid')
    },
  )

  it(
    'holds money in escrow: the escrow webhook registered, an escrow created, funded and released; escrow.funded and escrow.released arrive verified with the webhook secret',
    { timeout: 90_000 },
    async () => {
      const { rail, hooks } = await setUp()

      await rail.registerEscrowWebhook({ body: { webhookUrl: hooks.url, webhookSecret: escrowWebhookSecret } })
      const escrow = await rail.createEscrow({
        body: {
          type: 'goods',
          amount: 5_000_000,
          currency: 'NGN',
          payerEmail: 'buyer@example.com',
          recipientEmail: 'seller@example.com',
          description: 'A used generator',
          metadata: { orderId: 'ORD-1042' },
        },
      })
      await rail.simulateInboundCredit({
        body: { virtualAccount: escrow.funding!.virtualAccount, amountKobo: escrow.amount },
      })
      await eventArrives(hooks, 'escrow.funded', (event) => event.data.ref === escrow.ref)
      await rail.releaseEscrow({ path: { ref: escrow.ref }, body: { reason: 'buyer confirmed delivery' } })

      const released = await eventArrives(hooks, 'escrow.released', (event) => event.data.ref === escrow.ref)
      expect(released).toEqual(expect.objectContaining({ metadata: { orderId: 'ORD-1042' } }))
      expect((await rail.getEscrow({ path: { ref: escrow.ref } })).escrow.status).toBe('released')
      expect(hooks.refused).toBe(0)
    },
  )
})
