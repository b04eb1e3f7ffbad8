// The sandbox bank's HTTP interface, mounted under /sandbox-bank/v1. Every request is signed by
// the caller (the sandbox provider adapter) with the bank's shared secret, using Rail's own
// request-signing scheme with X-Sandbox-Timestamp and X-Sandbox-Signature headers.
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Pool } from '../platform/db.ts'
import { canonicalRequest, computeSignature, TIMESTAMP_TOLERANCE_S } from '../client/signing.ts'
import { constantTimeEqual } from '../platform/crypto.ts'
import { notFound, RailError } from '../platform/errors.ts'
import { AmountKobo } from '../platform/amounts.ts'
import type { HttpServer } from '../platform/http.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import { decideFault, readFaults, writeFaults, type FaultDecision } from './faults.ts'
import { magicAmount } from './magic.ts'
import type { SandboxBank } from './service.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by fault injection: the request is processed, its answer dropped. */
    loseResponse: boolean
  }
}

export const SANDBOX_BANK_PREFIX = '/sandbox-bank/v1'

const AccountNumber = Type.String({ pattern: '^[0-9]{10}$' })
const BankCode = Type.String({ pattern: '^[0-9]{3}$' })
const Amount = AmountKobo()

const AccountSchema = Type.Object({ bankCode: Type.String(), accountNumber: Type.String(), accountName: Type.String(), balanceKobo: Type.Integer(), status: Type.String() })
const NipFields = { responseCode: Type.String(), responseMessage: Type.String() }
const ClientName = Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'The provider profile the account belongs to' })
const InboundNoticeSchema = Type.Object({
  type: Type.Literal('credit.received'),
  sessionId: Type.String(),
  accountNumber: Type.String(),
  bankCode: Type.String(),
  amountKobo: Type.Integer(),
  currency: Type.Literal('NGN'),
  payerName: Type.Union([Type.String(), Type.Null()]),
  payerAccountNumber: Type.Union([Type.String(), Type.Null()]),
  payerBankCode: Type.Union([Type.String(), Type.Null()]),
  narration: Type.Union([Type.String(), Type.Null()]),
  creditedAt: Type.String(),
  clientReference: Type.String(),
})
const FaultsSchema = Type.Object({ noAnswerRate: Type.Number(), errorRate: Type.Number(), lostResponseRate: Type.Number(), delayMs: Type.Integer() })
const TransferAnswerSchema = Type.Object({ ...NipFields, reference: Type.String(), sessionId: Type.String(), amountKobo: Type.Integer() })

export function registerSandboxBankRoutes(app: HttpServer, deps: { bank: SandboxBank; secret: string; pool: Pool }): void {
  // The bank checks its own signature, below. It is another system with its own connections, so it
  // never queues behind Rail's requests, which may be waiting on it.
  const config = { auth: 'none' as const, admission: false, rateLimited: false }
  const preValidation = async (request: FastifyRequest) => verifyBankSignature(request, deps.secret)
  // Faults apply to the bank's business, not to the switch that sets them.
  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => injectFault(deps.pool, deps.bank, request, reply)
  app.decorateRequest('loseResponse', false)
  app.addHook('onSend', async (request, _reply, payload) => {
    if (request.loseResponse) request.raw.socket?.destroy() // processed in full; the answer never arrives
    return payload
  })

  app.put(
    `${SANDBOX_BANK_PREFIX}/faults`,
    {
      config,
      preValidation,
      schema: {
        tags: ['sandbox bank'],
        summary: 'Switch fault injection (rates 0..1, delay in ms); all zero turns it off',
        body: closedObject({
          noAnswerRate: Type.Number({ minimum: 0, maximum: 1 }),
          errorRate: Type.Number({ minimum: 0, maximum: 1 }),
          lostResponseRate: Type.Number({ minimum: 0, maximum: 1 }),
          delayMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
        }),
        response: { 200: FaultsSchema, ...errorResponses() },
      },
    },
    async (request) => writeFaults(deps.pool, request.body),
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/accounts`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        summary: "Open a customer's account; with an openingReference once (asked again: the same account; in another name: 409)",
        body: closedObject({
          accountName: Type.String({ minLength: 1, maxLength: 100 }),
          openingReference: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          client: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'The provider profile opening a wallet: the bank announces credits paid into the account to it' })),
        }),
        response: { 201: AccountSchema, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const account = await deps.bank.openAccount(request.body.accountName, request.body.openingReference, request.body.client)
      if (account === 'reference_taken') {
        throw new RailError('idempotency_conflict', `openingReference ${request.body.openingReference} opened an account in another name`)
      }
      return reply.code(201).send(account)
    },
  )

  app.get(
    `${SANDBOX_BANK_PREFIX}/accounts/:accountNumber`,
    { config, preValidation, preHandler, schema: { tags: ['sandbox bank'], params: closedObject({ accountNumber: AccountNumber }), response: { 200: AccountSchema, ...errorResponses(404) } } },
    async (request) => {
      const account = await deps.bank.getAccount(request.params.accountNumber)
      if (!account) throw notFound('Account')
      return account
    },
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/name-enquiry`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        body: closedObject({ bankCode: BankCode, accountNumber: AccountNumber }),
        response: {
          200: Type.Object({ ...NipFields, bankCode: Type.String(), accountNumber: Type.String(), accountName: Type.Union([Type.String(), Type.Null()]), sessionId: Type.String() }),
          ...errorResponses(),
        },
      },
    },
    async (request) => deps.bank.nameEnquiry(request.body.bankCode, request.body.accountNumber),
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/transfers`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        body: closedObject({
          reference: Type.String({ minLength: 1, maxLength: 64 }),
          kind: Type.Union([Type.Literal('book'), Type.Literal('credit'), Type.Literal('debit'), Type.Literal('interbank'), Type.Literal('payout')]),
          debitAccountNumber: Type.Optional(AccountNumber),
          creditAccountNumber: Type.Optional(AccountNumber),
          destinationBankCode: Type.Optional(BankCode),
          destinationAccountNumber: Type.Optional(AccountNumber),
          amountKobo: Amount,
          narration: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: { 200: TransferAnswerSchema, ...errorResponses() },
      },
    },
    async (request) => {
      const body = request.body
      const needs = {
        debitAccountNumber: body.kind !== 'credit' && body.kind !== 'payout',
        creditAccountNumber: body.kind === 'book' || body.kind === 'credit',
        destinationBankCode: body.kind === 'interbank' || body.kind === 'payout',
        destinationAccountNumber: body.kind === 'interbank' || body.kind === 'payout',
      }
      const wrong = (Object.keys(needs) as (keyof typeof needs)[]).filter((field) => needs[field] !== (body[field] !== undefined))
      if (wrong.length > 0) {
        const named = (Object.keys(needs) as (keyof typeof needs)[]).filter((field) => needs[field])
        throw new RailError('validation_error', `a ${body.kind} transfer names ${named.join(' and ')} only`, { fields: wrong.map((field) => ({ field, message: 'does not fit the kind' })) })
      }
      return deps.bank.transfer(body)
    },
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/transfers/:reference/outcome`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        summary: 'Register the outcome of a payout in progress (the sandbox settlement simulator)',
        params: closedObject({ reference: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: closedObject({ outcome: Type.Union([Type.Literal('confirmed'), Type.Literal('failed')]) }),
        response: { 200: Type.Object({ reference: Type.String(), registeredOutcome: Type.String() }), ...errorResponses() },
      },
    },
    async (request) => {
      const registered = await deps.bank.registerOutcome(request.params.reference, request.body.outcome)
      if (!registered) throw new RailError('invalid_state', `no payout in progress has reference ${request.params.reference}`)
      return { reference: request.params.reference, registeredOutcome: request.body.outcome }
    },
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/virtual-accounts`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        summary: "Allocate a virtual account for a client, once per client reference (asked again: the same account)",
        body: closedObject({ client: ClientName, clientReference: Type.String({ minLength: 1, maxLength: 64 }), accountName: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 201: AccountSchema, ...errorResponses() },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.bank.allocateVirtualAccount(request.body.client, request.body.clientReference, request.body.accountName)),
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/virtual-accounts/:accountNumber/archive`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        params: closedObject({ accountNumber: AccountNumber }),
        body: closedObject({ client: ClientName }),
        response: { 200: Type.Object({ accountNumber: Type.String(), archived: Type.Boolean() }), ...errorResponses(404) },
      },
    },
    async (request) => {
      if (!(await deps.bank.archiveVirtualAccount(request.body.client, request.params.accountNumber))) throw notFound('Virtual account')
      return { accountNumber: request.params.accountNumber, archived: true }
    },
  )

  app.get(
    `${SANDBOX_BANK_PREFIX}/virtual-accounts/:accountNumber/credits`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        summary: "The inbound credits of a client's account (a virtual account or a wallet's), oldest first (for a client requerying credits it missed)",
        params: closedObject({ accountNumber: AccountNumber }),
        querystring: closedObject({ client: ClientName }),
        response: { 200: Type.Object({ credits: Type.Array(InboundNoticeSchema) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const credits = await deps.bank.inboundCredits(request.query.client, request.params.accountNumber)
      if (!credits) throw notFound('Account')
      return { credits }
    },
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/inbound-credits`,
    {
      config,
      preValidation,
      preHandler,
      schema: {
        tags: ['sandbox bank'],
        summary: "Someone pays into a virtual account or a wallet's account of this bank; the bank announces it to the account's client by a signed webhook",
        body: closedObject({
          accountNumber: AccountNumber,
          amountKobo: Amount,
          payerName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          payerAccountNumber: Type.Optional(AccountNumber),
          payerBankCode: Type.Optional(Type.String({ pattern: '^[0-9]{3,6}$' })),
          narration: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: {
          200: Type.Object({ ...NipFields, sessionId: Type.String(), accountNumber: Type.String(), amountKobo: Type.Integer(), creditedAt: Type.String(), notified: Type.Boolean() }),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const answer = await deps.bank.receiveInboundCredit(request.body)
      if (!answer) throw notFound('Virtual account')
      return answer
    },
  )

  app.get(
    `${SANDBOX_BANK_PREFIX}/transfers/:reference`,
    { config, preValidation, preHandler, schema: { tags: ['sandbox bank'], params: closedObject({ reference: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 200: TransferAnswerSchema, ...errorResponses() } } },
    async (request) => deps.bank.requery(request.params.reference),
  )
}

/**
 * A lost request: the first transfer of a reference is dropped unprocessed (the bank records only
 * that it dropped it), and a resend of it is processed. Elsewhere (an inbound credit, which has no
 * reference of the caller's) every such request is dropped.
 */
async function dropDecision(bank: SandboxBank, request: FastifyRequest, body: { reference?: unknown } | undefined): Promise<FaultDecision> {
  const isTransfer = request.method === 'POST' && request.routeOptions.url === `${SANDBOX_BANK_PREFIX}/transfers`
  if (!isTransfer || typeof body?.reference !== 'string') return 'no_answer'
  return (await bank.dropFirstSubmission(body.reference)) ? 'no_answer' : 'none'
}

async function injectFault(pool: Pool, bank: SandboxBank, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const faults = await readFaults(pool)
  if (faults.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.delayMs))
  // A magic amount picks its fault for this request alone; otherwise the switched-on rates decide.
  const body = request.body as { amountKobo?: unknown; reference?: unknown } | undefined
  const magic = typeof body?.amountKobo === 'number' ? magicAmount(body.amountKobo) : undefined
  const decision = magic?.kind === 'fault' ? magic.fault : magic?.kind === 'drop_first_submission' ? await dropDecision(bank, request, body) : decideFault(faults)
  if (decision === 'no_answer') {
    reply.hijack()
    request.raw.socket?.destroy()
  } else if (decision === 'error') {
    throw new Error('sandbox bank fault injection: internal error')
  } else if (decision === 'lose_response') {
    request.loseResponse = true
  }
}

function verifyBankSignature(request: FastifyRequest, secret: string): void {
  const timestamp = request.headers['x-sandbox-timestamp']
  const signature = request.headers['x-sandbox-signature']
  const fail = () => new RailError('unauthorized', 'Missing or invalid credentials')
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(timestamp)) throw fail()
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp)) > TIMESTAMP_TOLERANCE_S) throw fail()
  const expected = computeSignature(secret, canonicalRequest(Number(timestamp), request.method, request.raw.url ?? '', request.rawBody ?? ''))
  if (!constantTimeEqual(expected, signature)) throw fail()
}
