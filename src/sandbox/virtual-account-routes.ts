// The sandbox bank's virtual accounts and the credits paid into its clients' accounts: allocation
// (once per client reference), archiving, the requery of an account's credits, and a payment in.
import { Type } from '@sinclair/typebox'
import { notFound } from '../platform/errors.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import {
  AccountNumber,
  AccountSchema,
  Amount,
  ClientName,
  NipFields,
  SANDBOX_BANK_PREFIX,
  type BankRoutes,
} from './route-schemas.ts'

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

export function registerVirtualAccountRoutes(routes: BankRoutes): void {
  registerAllocationRoutes(routes)
  registerInboundCreditRoutes(routes)
}

function registerAllocationRoutes({ app, bank, options }: BankRoutes): void {
  app.post(
    `${SANDBOX_BANK_PREFIX}/virtual-accounts`,
    {
      ...options,
      schema: {
        operationId: 'allocateBankVirtualAccount',
        description:
          'Allocates a virtual account for a client, once per client reference (asked again: the same account).',
        tags: ['sandbox bank'],
        summary: 'Allocate a virtual account for a client, once per client reference (asked again: the same account)',
        body: closedObject({
          client: ClientName,
          clientReference: Type.String({ minLength: 1, maxLength: 64 }),
          accountName: Type.String({ minLength: 1, maxLength: 100 }),
        }),
        response: { 201: AccountSchema, ...errorResponses() },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await bank.allocateVirtualAccount(
            request.body.client,
            request.body.clientReference,
            request.body.accountName,
          ),
        ),
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/virtual-accounts/:accountNumber/archive`,
    {
      ...options,
      schema: {
        operationId: 'archiveBankVirtualAccount',
        summary: 'Archive a virtual account',
        description: 'Archives a virtual account: it stops accepting credits for its client.',
        tags: ['sandbox bank'],
        params: closedObject({ accountNumber: AccountNumber }),
        body: closedObject({ client: ClientName }),
        response: {
          200: Type.Object({ accountNumber: Type.String(), archived: Type.Boolean() }),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => {
      if (!(await bank.archiveVirtualAccount(request.body.client, request.params.accountNumber)))
        throw notFound('Virtual account')
      return { accountNumber: request.params.accountNumber, archived: true }
    },
  )
}

function registerInboundCreditRoutes({ app, bank, options }: BankRoutes): void {
  app.get(
    `${SANDBOX_BANK_PREFIX}/virtual-accounts/:accountNumber/credits`,
    {
      ...options,
      schema: {
        operationId: 'listBankAccountCredits',
        description:
          "The inbound credits of a client's account (a virtual account or a wallet's), oldest first, at most 1,000, for a client requerying credits it missed; with `since`, only those credited at or after that time (a client's sweep asks for what came since its last).",
        tags: ['sandbox bank'],
        summary:
          "The inbound credits of a client's account (a virtual account or a wallet's), oldest first (for a client requerying credits it missed)",
        params: closedObject({ accountNumber: AccountNumber }),
        querystring: closedObject({
          client: ClientName,
          since: Type.Optional(
            Type.String({ format: 'date-time', description: 'Only credits credited at or after this time' }),
          ),
        }),
        response: { 200: Type.Object({ credits: Type.Array(InboundNoticeSchema) }), ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const since = request.query.since === undefined ? undefined : new Date(request.query.since)
      const credits = await bank.inboundCredits(request.query.client, request.params.accountNumber, since)
      if (!credits) throw notFound('Account')
      return { credits }
    },
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/inbound-credits`,
    {
      ...options,
      schema: {
        operationId: 'sendBankInboundCredit',
        description:
          "Someone pays into a virtual account or a wallet's account of this bank; the bank announces it to the account's client by a signed webhook.",
        tags: ['sandbox bank'],
        summary:
          "Someone pays into a virtual account or a wallet's account of this bank; the bank announces it to the account's client by a signed webhook",
        body: closedObject({
          accountNumber: AccountNumber,
          amountKobo: Amount,
          payerName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          payerAccountNumber: Type.Optional(AccountNumber),
          payerBankCode: Type.Optional(Type.String({ pattern: '^[0-9]{3,6}$' })),
          narration: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: {
          200: Type.Object({
            ...NipFields,
            sessionId: Type.String(),
            accountNumber: Type.String(),
            amountKobo: Type.Integer(),
            creditedAt: Type.String(),
            notified: Type.Boolean(),
          }),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => {
      const answer = await bank.receiveInboundCredit(request.body)
      if (!answer) throw notFound('Virtual account')
      return answer
    },
  )
}
