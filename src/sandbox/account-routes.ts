// The sandbox bank's customer accounts: opening (once per opening reference), reading, and name enquiry.
import { Type } from '@sinclair/typebox'
import { notFound, RailError } from '../platform/errors.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import {
  AccountNumber,
  AccountSchema,
  BankCode,
  NipFields,
  SANDBOX_BANK_PREFIX,
  type BankRoutes,
} from './route-schemas.ts'

export function registerAccountRoutes({ app, bank, options }: BankRoutes): void {
  registerOpenAccount({ app, bank, options })
  registerAccountReadsAndCredits({ app, bank, options })
}

function registerOpenAccount({ app, bank, options }: BankRoutes): void {
  app.post(
    `${SANDBOX_BANK_PREFIX}/accounts`,
    {
      ...options,
      schema: {
        operationId: 'openBankAccount',
        description:
          "Opens a customer's account at the sandbox bank. With an `openingReference`, once: asked again, the same account; in another name, 409.",
        tags: ['sandbox bank'],
        summary:
          "Open a customer's account; with an openingReference once (asked again: the same account; in another name: 409)",
        body: closedObject({
          accountName: Type.String({ minLength: 1, maxLength: 100 }),
          openingReference: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          client: Type.Optional(
            Type.String({
              pattern: '^[a-z0-9-]{1,64}$',
              description:
                'The provider profile opening a wallet: the bank announces credits paid into the account to it',
            }),
          ),
        }),
        response: { 201: AccountSchema, ...errorResponses('idempotency_conflict') },
      },
    },
    async (request, reply) => {
      const account = await bank.openAccount(
        request.body.accountName,
        request.body.openingReference,
        request.body.client,
      )
      if (account === 'reference_taken') {
        throw new RailError(
          'idempotency_conflict',
          `openingReference ${request.body.openingReference} opened an account in another name`,
        )
      }
      return reply.code(201).send(account)
    },
  )
}

function registerAccountReadsAndCredits({ app, bank, options }: BankRoutes): void {
  app.get(
    `${SANDBOX_BANK_PREFIX}/accounts/:accountNumber`,
    {
      ...options,
      schema: {
        operationId: 'getBankAccount',
        summary: 'One account',
        description: 'An account of the sandbox bank by its number: name, balance and status.',
        tags: ['sandbox bank'],
        params: closedObject({ accountNumber: AccountNumber }),
        response: { 200: AccountSchema, ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const account = await bank.getAccount(request.params.accountNumber)
      if (!account) throw notFound('Account')
      return account
    },
  )

  app.post(
    `${SANDBOX_BANK_PREFIX}/name-enquiry`,
    {
      ...options,
      schema: {
        operationId: 'enquireBankAccountName',
        summary: 'Name enquiry',
        description:
          'NIP name enquiry: the name on an account, or a NIP response code saying why not (e.g. `07` invalid account).',
        tags: ['sandbox bank'],
        body: closedObject({ bankCode: BankCode, accountNumber: AccountNumber }),
        response: {
          200: Type.Object({
            ...NipFields,
            bankCode: Type.String(),
            accountNumber: Type.String(),
            accountName: Type.Union([Type.String(), Type.Null()]),
            sessionId: Type.String(),
          }),
          ...errorResponses(),
        },
      },
    },
    async (request) => bank.nameEnquiry(request.body.bankCode, request.body.accountNumber),
  )
}
