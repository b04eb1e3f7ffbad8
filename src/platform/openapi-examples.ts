// Examples for the OpenAPI documents, made from each schema and realistic values of the fields
// Rail uses everywhere (an amount in kobo, a NUBAN, a CBN bank code, a reference). Redocly checks
// every example against its schema, so an example that drifts from the route fails the lint test.

type Json = Record<string, unknown>

const WHEN = '2026-11-25T09:30:00.000Z'
const UUID = '0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42'

/** Values by field name: what a partner would really send or see. */
const FIELD_EXAMPLES: Record<string, unknown> = {
  amountKobo: 2_500_000,
  amount: 2_500_000,
  amountReceivedKobo: 2_500_000,
  currency: 'NGN',
  reference: 'inv-2026-0042',
  clientReference: 'payout-2026-11-25-0007',
  customerReference: 'cust-10293',
  openingReference: 'open-cust-10293',
  accountNumber: '0123456785',
  beneficiaryAccountNumber: '0123456785',
  destinationAccountNumber: '0123456785',
  virtualAccount: '9912345678',
  bankCode: '058',
  beneficiaryBankCode: '058',
  destinationBankCode: '058',
  bankName: 'Guaranty Trust Bank',
  accountName: 'CHUKWUEMEKA OKAFOR',
  beneficiaryAccountName: 'CHUKWUEMEKA OKAFOR',
  destinationAccountName: 'CHUKWUEMEKA OKAFOR',
  settlementAccountName: 'CHUKWUEMEKA OKAFOR',
  name: 'Adaeze Okoro',
  firstName: 'Adaeze',
  lastName: 'Okoro',
  email: 'adaeze.okoro@example.ng',
  phone: '+2348031234567',
  narration: 'November rent',
  description: 'Website redesign, phase 1',
  title: 'Invoice INV-0042: website redesign',
  reason: 'Goods delivered and accepted',
  purposeTag: 'school-fees',
  holderRef: 'holder-7f3a9c',
  sessionId: '000013261125093000123456789012',
  provider: 'sandbox',
  currentState: 'published',
  callbackUrl: 'https://partner.example.ng/hooks/rail',
  webhookUrl: 'https://partner.example.ng/hooks/escrow',
  webhookSecret: 'escrow-hook-secret-2026',
  checkoutUrl: 'http://127.0.0.1:8080/checkout/ck_7Hq2mV9xWc4pLs8nTb3zRa',
  message: 'Accepted',
  responseCode: '00',
  responseMessage: 'Approved or completed successfully',
  providerResponseCode: '00',
  providerResponseMessage: 'Approved or completed successfully',
  type: 'transfer.confirmed',
  event: 'transfer.confirmed',
  eventKind: 'transfer.confirmed',
  objectType: 'outbound_transfer',
  trackingId: 'trk_5k2m9q4w7z1x3c6v8b0n2m4q',
  brr: 'BRR20261125093000120',
  ref: 'esc-2026-0311',
  keyId: 'rk_kid_test_4f9a2c7e1b3d',
  cycle: '2026-11-25',
  seconds: 3600,
  limit: 20,
  timestamp: WHEN,
  cutoffTime: '17:00',
  metadata: { orderId: 'ord-5521' },
  virtualAccountName: 'RAIL/ADAEZE OKORO',
  virtualAccountBank: 'Guaranty Trust Bank',
  verifiedAccountName: 'CHUKWUEMEKA OKAFOR',
  payerName: 'ADAEZE OKORO',
  checkoutToken: 'ck_7Hq2mV9xWc4pLs8nTb3zRa',
  providerChannel: 'bank_transfer',
  channel: 'bank_transfer',
  providerReference: 'SBX-20261125-000123',
  merchantDisplayName: 'Lagos Books Ltd',
  returnUrl: 'https://partner.example.ng/orders/ord-5521',
  url: 'https://partner.example.ng/hooks/rail',
  payerEmail: 'adaeze.okoro@example.ng',
  recipientEmail: 'chinedu.eze@example.ng',
  invoiceReference: 'inv-2026-0042',
  refundState: 'pending',
  registeredOutcome: 'confirmed',
  ownerType: 'invoice',
  timeZone: 'Africa/Lagos',
  purpose: 'payment_intent',
  status: 'confirmed',
  responseExcerpt: '{"received":true}',
  nextCursor: UUID,
  consumerId: 'cust-10293',
  customerId: 'cust-10293',
  providerSessionId: '000013261125093000123456789012',
  code: 'beneficiary_bank_declined',
  statusCode: 200,
  durationMs: 184,
}

/** Fields shown as null in answers: what is absent on a typical object (no failure yet, not finished). */
const NULL_FIELDS = new Set([
  'failureReason',
  'terminalAt',
  'completedAt',
  'failedAt',
  'lastError',
  'error',
  'excessOf',
  'archivedAt',
  'cancelledAt',
  'callbackUrlDisabled',
])

/**
 * Request bodies whose fields exclude each other (a refund names one source; a float settlement
 * has no bank account): the example is the one a partner would send, not every field at once.
 */
export const REQUEST_EXAMPLES: Record<string, unknown> = {
  createRefund: {
    reference: 'refund-2026-0019',
    creditId: UUID,
    amountKobo: 500_000,
    reason: 'Customer returned the goods',
  },
  simulateOutboundSettlement: { transferId: UUID, outcome: 'confirmed' },
  setSettlementSettings: {
    mode: 'bank',
    bankAccount: { accountNumber: '0123456785', bankCode: '058', accountName: 'CHUKWUEMEKA OKAFOR' },
    cutoffTime: '17:00',
  },
  createPaymentIntent: {
    reference: 'order-5521',
    amountKobo: 2_500_000,
    currency: 'NGN',
    expiresAt: '2026-11-26T09:30:00.000Z',
    virtualAccountHolder: { firstName: 'Adaeze', lastName: 'Okoro', email: 'adaeze.okoro@example.ng' },
    callbackUrl: 'https://partner.example.ng/hooks/rail',
  },
  createOutboundTransfer: {
    clientReference: 'payout-2026-11-25-0007',
    beneficiaryAccountNumber: '0123456785',
    beneficiaryBankCode: '058',
    beneficiaryAccountName: 'CHUKWUEMEKA OKAFOR',
    amountKobo: 2_500_000,
    currency: 'NGN',
    narration: 'November rent',
  },
}

/** Path and query parameters by name. */
export const PARAMETER_EXAMPLES: Record<string, unknown> = {
  id: UUID,
  reference: 'inv-2026-0042',
  ref: 'esc-2026-0311',
  trackingId: 'trk_5k2m9q4w7z1x3c6v8b0n2m4q',
  brr: 'BRR20261125093000120',
  accountNumber: '0123456785',
  customerId: 'wal_8d3f2a91c7',
  provider: 'sandbox',
  limit: 20,
  cursor: UUID,
  from: '2026-11-01T00:00:00.000Z',
  to: WHEN,
  type: 'transfer.confirmed',
  objectType: 'outbound_transfer',
  objectId: UUID,
}

/** Strings by pattern, for fields the dictionary does not name. */
const PATTERN_EXAMPLES: Record<string, string> = {
  '^[0-9]{10}$': '0123456785',
  '^[0-9]{3}$': '058',
  '^[0-9]{3,6}$': '058',
  '^[A-Z]{3}$': 'NGN',
  '^trk_[a-z0-9]{24}$': 'trk_5k2m9q4w7z1x3c6v8b0n2m4q',
  '^\\+?[0-9]{7,15}$': '+2348031234567',
  '^[a-z0-9-]{1,64}$': 'sandbox',
  '^[a-z][a-z0-9-]{1,31}$': 'sandbox',
  '^[0-9]{6}$': '000013',
}

const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': WHEN,
  date: '2026-11-25',
  uuid: UUID,
  uri: 'https://partner.example.ng/hooks/rail',
  email: 'adaeze.okoro@example.ng',
}

const MAX_DEPTH = 24

/** An example of a schema, resolving references to components; a field's name picks a realistic value. */
export function exampleOf(
  schema: Json | undefined,
  components: Record<string, Json>,
  fieldName?: string,
  depth = 0,
): unknown {
  if (!schema || depth > MAX_DEPTH) return undefined
  if (typeof schema.$ref === 'string')
    return exampleOf(components[schema.$ref.split('/').pop() ?? ''], components, fieldName, depth + 1)
  if (fieldName !== undefined && NULL_FIELDS.has(fieldName) && acceptsNull(schema)) return null
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if (schema.example !== undefined) return schema.example
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum)) return named(fieldName, schema) ?? schema.enum[0]
  if (Array.isArray(schema.allOf))
    return Object.assign(
      {},
      ...schema.allOf.map((member: Json) => exampleOf(member, components, fieldName, depth + 1) as Json),
    )
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined
  if (union) return unionExample(union, components, fieldName, depth)
  if (schema.default !== undefined && schema.type !== 'object') return schema.default
  return typedExample(schema, components, fieldName, depth)
}

function acceptsNull(schema: Json): boolean {
  const members = (schema.anyOf ?? schema.oneOf) as Json[] | undefined
  return (
    schema.type === 'null' ||
    (Array.isArray(schema.type) && schema.type.includes('null')) ||
    (members?.some((member) => member.type === 'null') ?? false)
  )
}

function named(fieldName: string | undefined, schema: Json): unknown {
  if (fieldName === undefined || !(fieldName in FIELD_EXAMPLES)) return undefined
  const value = FIELD_EXAMPLES[fieldName]
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return undefined
  return value
}

function unionExample(
  members: Json[],
  components: Record<string, Json>,
  fieldName: string | undefined,
  depth: number,
): unknown {
  const literals = members
    .filter((member) => member.const !== undefined || Array.isArray(member.enum))
    .map((member) => member.const ?? (member.enum as unknown[])[0])
  if (literals.length === members.length)
    return fieldName !== undefined && literals.includes(FIELD_EXAMPLES[fieldName])
      ? FIELD_EXAMPLES[fieldName]
      : literals[0]
  const value = members.find((member) => member.type !== 'null')
  return value ? exampleOf(value, components, fieldName, depth + 1) : null
}

function typedExample(
  schema: Json,
  components: Record<string, Json>,
  fieldName: string | undefined,
  depth: number,
): unknown {
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type
  switch (type) {
    case 'object':
      return objectExample(schema, components, fieldName, depth)
    case 'array': {
      const item = exampleOf(schema.items as Json | undefined, components, singular(fieldName), depth + 1)
      return item === undefined ? [] : [item]
    }
    case 'string':
      return stringExample(schema, fieldName)
    case 'integer':
    case 'number':
      return numberExample(schema, fieldName)
    case 'boolean':
      return fieldName === 'duplicate' || fieldName === 'replayed' ? false : true
    case 'null':
      return null
    default:
      return fieldName !== undefined && fieldName in FIELD_EXAMPLES ? FIELD_EXAMPLES[fieldName] : {}
  }
}

function objectExample(
  schema: Json,
  components: Record<string, Json>,
  fieldName: string | undefined,
  depth: number,
): unknown {
  const properties = schema.properties as Record<string, Json> | undefined
  if (!properties || Object.keys(properties).length === 0)
    return fieldName !== undefined && typeof FIELD_EXAMPLES[fieldName] === 'object' ? FIELD_EXAMPLES[fieldName] : {}
  const example: Json = {}
  for (const [name, property] of Object.entries(properties)) {
    const value = exampleOf(property, components, name, depth + 1)
    if (value !== undefined) example[name] = value
  }
  return example
}

function stringExample(schema: Json, fieldName: string | undefined): string {
  const value = named(fieldName, schema)
  if (typeof value === 'string' && fits(schema, value)) return value
  if (typeof schema.pattern === 'string' && PATTERN_EXAMPLES[schema.pattern]) return PATTERN_EXAMPLES[schema.pattern]!
  if (typeof schema.format === 'string' && FORMAT_EXAMPLES[schema.format]) return FORMAT_EXAMPLES[schema.format]!
  if (fieldName?.endsWith('At')) return WHEN
  if (fieldName?.endsWith('Id') || fieldName === 'id') return UUID
  const text = fieldName ?? 'text'
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0
  return text.padEnd(minLength, 'x')
}

function fits(schema: Json, value: string): boolean {
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false
  return typeof schema.pattern !== 'string' || new RegExp(schema.pattern, 'u').test(value)
}

function numberExample(schema: Json, fieldName: string | undefined): number {
  const value = named(fieldName, schema)
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined
  if (
    typeof value === 'number' &&
    (minimum === undefined || value >= minimum) &&
    (maximum === undefined || value <= maximum)
  )
    return value
  if (fieldName?.endsWith('Kobo')) return Math.min(maximum ?? 2_500_000, Math.max(minimum ?? 0, 2_500_000))
  if (schema.default !== undefined) return schema.default as number
  return minimum ?? (maximum !== undefined ? Math.min(0, maximum) : 1)
}

function singular(fieldName: string | undefined): string | undefined {
  return fieldName?.endsWith('s') ? fieldName.slice(0, -1) : fieldName
}
