// The callbacks Rail POSTs to a partner's URL, one entry per event type under `webhooks`: the
// envelope every delivery shares, the `data` of each event (docs/webhooks.md, "Event payloads"),
// and the headers that sign it.
type Json = Record<string, unknown>

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const string = (description?: string): Json => (description ? { type: 'string', description } : { type: 'string' })
const nullable = (schema: Json): Json => ({ anyOf: [schema, { type: 'null' }] })
const integer = (description?: string): Json => (description ? { type: 'integer', description } : { type: 'integer' })
const object = (properties: Record<string, Json>, description?: string): Json => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...(description ? { description } : {}),
})
const literal = (...values: string[]): Json => ({ type: 'string', enum: values })

/** How Rail learned of a credit (docs/webhooks.md): by the bank's notice, the partner's requery, or the sweep of every account (a notice that never came). */
const FOUND_BY = literal('notice', 'requery', 'sweep')

const PAYER = object(
  { name: nullable(string()), accountNumber: nullable(string()), bankCode: nullable(string()) },
  'Who paid, as the bank gave it (null where it gave nothing)',
)

const CREDIT_CONFIRMED = object({
  creditId: string(),
  trackingId: string(),
  virtualAccount: string('The account number paid into'),
  bankCode: string(),
  amountKobo: integer(),
  currency: string(),
  sessionId: string('The NIP session id'),
  creditedAt: { type: 'string', format: 'date-time' },
  objectType: literal('payment_intent', 'virtual_account', 'invoice', 'escrow'),
  reference: nullable(string()),
  purposeTag: nullable(string()),
  brr: nullable(string("The transaction's BRR for a BRR-bearing account")),
  payer: PAYER,
  narration: nullable(string()),
  paymentIntent: nullable(
    object({
      id: string(),
      reference: string(),
      status: string(),
      amountKobo: integer(),
      amountReceivedKobo: integer(),
      ownerType: nullable(string()),
      ownerId: nullable(string()),
    }),
  ),
  foundBy: FOUND_BY,
})

const FBO_FUNDING = object({
  creditId: string(),
  trackingId: string(),
  holderRef: string(),
  purposeTag: nullable(string()),
  virtualAccount: string(),
  bankCode: string(),
  amountKobo: integer(),
  currency: string(),
  sessionId: string(),
  creditedAt: { type: 'string', format: 'date-time' },
  foundBy: FOUND_BY,
})

const WALLET_FUNDED = object({
  walletId: string(),
  customerReference: string(),
  accountNumber: string(),
  bankCode: string(),
  amountKobo: integer(),
  currency: string(),
  sessionId: string(),
  payer: PAYER,
  narration: nullable(string()),
  creditId: string(),
  creditedAt: { type: 'string', format: 'date-time' },
  foundBy: FOUND_BY,
})

const CREDIT_UNMATCHED = object({
  creditId: string('The unmatched item: GET /api/v1/rail/unmatched/{creditId}'),
  reason: string(),
  amountKobo: integer(),
  currency: string(),
  virtualAccount: string(),
  trackingId: nullable(string()),
  walletId: nullable(string()),
  sessionId: string(),
  payer: PAYER,
  narration: nullable(string()),
  creditedAt: { type: 'string', format: 'date-time' },
  excessOf: nullable(
    object(
      { creditId: string(), sessionId: string(), amountKobo: integer() },
      "The credit an overpayment's excess was part of",
    ),
  ),
  foundBy: FOUND_BY,
})

const ESCROW_BASE = { ref: string(), status: string(), amount: integer('In kobo'), currency: string() }
const ESCROW_CHANGED = {
  type: 'object',
  required: Object.keys(ESCROW_BASE),
  properties: {
    ...ESCROW_BASE,
    releasedAt: { type: 'string', format: 'date-time', description: 'On escrow.released only' },
  },
}
const ESCROW_DISBURSEMENT = object({
  ...ESCROW_BASE,
  disbursement: object({
    destination: {
      anyOf: [object({ accountNumber: string(), bankCode: string(), accountName: string() }), literal('float')],
    },
    state: literal('paid', 'failed'),
    outboundTransferId: nullable(
      string('The payout; null for a disbursement to the float, which is a ledger transfer'),
    ),
  }),
})
const ESCROW_REFUND = object({
  ...ESCROW_BASE,
  refund: object({
    state: literal('refunded', 'failed'),
    amountKobo: integer(),
    refunds: {
      type: 'array',
      items: object({
        id: string(),
        creditId: string(),
        amountKobo: integer(),
        state: string(),
        outboundTransferId: nullable(string()),
      }),
    },
  }),
})

/** Each event type: what its `data` is, and what the event means. */
const EVENTS: Record<string, { data: Json; says: string; escrow?: boolean }> = {
  'transfer.confirmed': {
    data: ref('OutboundTransfer'),
    says: 'The bank confirmed an outbound transfer: the money reached the beneficiary.',
  },
  'transfer.failed': {
    data: ref('OutboundTransfer'),
    says: 'An outbound transfer failed at the bank; its amount is back on the float.',
  },
  'transfer.unknown': {
    data: ref('OutboundTransfer'),
    says: 'The bank gave no final answer within the requery schedule; an operator decides it from evidence.',
  },
  'transfer.reversed': {
    data: ref('OutboundTransfer'),
    says: 'The provider reversed a confirmed outbound transfer: nothing reached the beneficiary in the end, and its amount is back on the float.',
  },
  'credit.confirmed': {
    data: CREDIT_CONFIRMED,
    says: 'A credit into a virtual account, payment intent, invoice or escrow account was applied.',
  },
  'credit.unmatched': {
    data: CREDIT_UNMATCHED,
    says: 'A credit could not be applied and fell to triage (GET /api/v1/rail/unmatched).',
  },
  'fbo.funding': {
    data: FBO_FUNDING,
    says: 'A credit into an FBO pool account, attributed to its holder reference (`eventKind: "fbo.funding"`).',
  },
  'wallet.funded': { data: WALLET_FUNDED, says: "A transfer into a wallet's account number funded it." },
  'invoice.published': { data: ref('Invoice'), says: 'An invoice was published: its virtual account collects.' },
  'invoice.partially_paid': { data: ref('Invoice'), says: 'An invoice received part of its amount.' },
  'invoice.paid': { data: ref('Invoice'), says: 'An invoice received all of its amount (or more).' },
  'invoice.cancelled': {
    data: ref('Invoice'),
    says: 'An invoice was cancelled; later credits to its account go to triage.',
  },
  'refund.succeeded': { data: ref('Refund'), says: 'A refund reached the account the money came from.' },
  'refund.failed': { data: ref('Refund'), says: 'A refund failed at the bank.' },
  'settlement.paid': { data: ref('Settlement'), says: "A bank settlement's payout was confirmed." },
  'settlement.failed': {
    data: ref('Settlement'),
    says: "A bank settlement's payout failed; the money is back in collections for the next cycle.",
  },
  'escrow.funded': { data: ESCROW_CHANGED, says: 'An escrow received its amount.', escrow: true },
  'escrow.released': { data: ESCROW_CHANGED, says: 'An escrow was released to its recipient.', escrow: true },
  'escrow.cancelled': {
    data: ESCROW_CHANGED,
    says: 'An escrow was cancelled; funded money is refunded.',
    escrow: true,
  },
  'escrow.expired': { data: ESCROW_CHANGED, says: 'An escrow expired before it was funded or released.', escrow: true },
  'escrow.disbursed': {
    data: ESCROW_DISBURSEMENT,
    says: "The released amount reached the recipient (or the partner's float).",
    escrow: true,
  },
  'escrow.disbursement_failed': {
    data: ESCROW_DISBURSEMENT,
    says: 'The payout of a released escrow failed; the money is held again for another release.',
    escrow: true,
  },
  'escrow.refunded': { data: ESCROW_REFUND, says: "Every funding credit's refund succeeded.", escrow: true },
  'escrow.refund_failed': {
    data: ESCROW_REFUND,
    says: 'A refund of an escrow failed; its money is held until PATCH /api/v1/escrow/partner/{ref}/refund retries it.',
    escrow: true,
  },
}

const HEADER_PARAMETERS: [string, string, string][] = [
  [
    'x-rail-event-id',
    "The event's id (also the body's `id` and `webhook-id`): de-duplicate on it",
    '0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42',
  ],
  ['x-rail-event-type', "The event's type", 'transfer.confirmed'],
  ['x-rail-timestamp', 'Unix seconds of this attempt', '1795599000'],
  [
    'x-rail-signature',
    '`sha256=` + lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the secret as issued (`whsec_…` included); absent when no secret is set',
    'sha256=3f7c2a9d41b8e6f0c5a7d2e9b1f4c8a6e3d0b7f2a5c9e1d4b8f6a2c0e7d3b9f1',
  ],
  ['webhook-id', 'Standard Webhooks: the event id', '0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42'],
  ['webhook-timestamp', 'Standard Webhooks: unix seconds of this attempt', '1795599000'],
  [
    'webhook-signature',
    'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`',
    'v1,Vb0sX2r7mQ9kP4nL1tYc8wZ3aF6hJ5dG2eR0uT7iO9s=',
  ],
]

function envelope(type: string, data: Json, escrow: boolean): Json {
  const properties: Record<string, Json> = {
    id: { type: 'string', format: 'uuid', description: "The event's id, stable across attempts and redeliveries" },
    event: { type: 'string', enum: [type] },
    eventKind: { type: 'string', enum: [type], description: 'Repeats `event`' },
    timestamp: { type: 'string', format: 'date-time', description: 'When the event was recorded' },
    data,
  }
  if (escrow)
    properties.metadata = {
      type: 'object',
      additionalProperties: true,
      description: "The escrow's metadata, as the partner gave it",
    }
  return { type: 'object', required: ['id', 'event', 'eventKind', 'timestamp', 'data'], properties }
}

/** The `webhooks` section: one POST per event type, as Rail delivers it. */
export function partnerWebhooks(): Record<string, Record<string, Json>> {
  const webhooks: Record<string, Record<string, Json>> = {}
  for (const [type, event] of Object.entries(EVENTS)) {
    webhooks[type] = {
      post: {
        operationId: `on${type
          .split(/[._]/)
          .map((word) => word[0]!.toUpperCase() + word.slice(1))
          .join('')}`,
        tags: ['events'],
        summary: type,
        description: `${event.says} Delivered to the object's own callback URL, else the partner's default; signed with ${event.escrow ? 'the escrow webhook secret' : "the partner's callback-signing secret"}. Retried over about three days until a 2xx arrives; 410 stops and disables the URL.`,
        security: [],
        parameters: HEADER_PARAMETERS.map(([name, description, example]) => ({
          name,
          in: 'header',
          required: !name.includes('signature'),
          description,
          schema: { type: 'string' },
          example,
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: envelope(type, event.data, event.escrow === true) } },
        },
        responses: {
          '200': { description: 'Any 2xx within 10 s: delivered' },
          '410': { description: 'Gone: the delivery fails and the URL is disabled until set again' },
        },
      },
    }
  }
  return webhooks
}
