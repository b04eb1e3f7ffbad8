// A refund by payment intent whose credits all lack a valid sender account answers what
// docs/refunds.md promises — 422 refund_destination_unknown — whether or not an amount is asked,
// and moves nothing.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startCollections, type CollectionsHarness } from '../collections/support.ts'
import { creditTo, movedFor, newPartner, refund } from './support.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  await harness?.app.close()
})

it('a refund by payment intent with no refundable sender is 422 refund_destination_unknown, with or without an amount', async () => {
  const partner = await newPartner(harness)
  const intent = (
    await partner.client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
      reference: randomUUID(),
      amountKobo: 7_000,
    })
  ).body
  // The bank gave no sender account with the credit.
  await creditTo(harness, partner, intent.virtualAccount, 7_000, {})
  const before = await movedFor(harness, partner.credentials.partnerId)
  for (const amount of [{ amountKobo: 1_000 }, {}]) {
    const answer = await refund(partner.client, { reference: randomUUID(), paymentIntentId: intent.id, ...amount })
    expect([answer.status, answer.body.error], JSON.stringify(answer.body)).toEqual([422, 'refund_destination_unknown'])
  }
  expect(await movedFor(harness, partner.credentials.partnerId)).toEqual(before)
})
