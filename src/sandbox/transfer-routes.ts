// The sandbox bank's transfers: making one (answered with a NIP code), registering a payout's
// outcome (the settlement simulator), and requery by reference.
import { Type } from '@sinclair/typebox'
import { RailError } from '../platform/errors.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import { AccountNumber, Amount, BankCode, NipFields, SANDBOX_BANK_PREFIX, type BankRoutes } from './route-schemas.ts'
import type { TransferRequest } from './types.ts'

const TransferAnswerSchema = Type.Object({
  ...NipFields,
  reference: Type.String(),
  sessionId: Type.String(),
  amountKobo: Type.Integer(),
})
const Reference = Type.String({ minLength: 1, maxLength: 64 })

export function registerTransferRoutes({ app, bank, options }: BankRoutes): void {
  registerSubmit({ app, bank, options })
  registerStatusAndReversal({ app, bank, options })
}

function registerSubmit({ app, bank, options }: BankRoutes): void {
  app.post(
    `${SANDBOX_BANK_PREFIX}/transfers`,
    {
      ...options,
      schema: {
        operationId: 'sendBankTransfer',
        summary: 'Send a transfer',
        description:
          "Sends a transfer from a client's account to any bank; the bank answers with a NIP response code and settles asynchronously. Magic amounts pick outcomes and faults (docs/sandbox.md).",
        tags: ['sandbox bank'],
        body: closedObject({
          reference: Reference,
          kind: Type.Union([
            Type.Literal('book'),
            Type.Literal('credit'),
            Type.Literal('debit'),
            Type.Literal('interbank'),
            Type.Literal('payout'),
          ]),
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
      assertFieldsFitKind(request.body)
      return bank.transfer(request.body)
    },
  )
}

function registerStatusAndReversal({ app, bank, options }: BankRoutes): void {
  app.post(
    `${SANDBOX_BANK_PREFIX}/transfers/:reference/outcome`,
    {
      ...options,
      schema: {
        operationId: 'setBankTransferOutcome',
        description:
          'Registers the outcome of a payout in progress (the sandbox settlement simulator); the next requery sees it.',
        tags: ['sandbox bank'],
        summary: 'Register the outcome of a payout in progress (the sandbox settlement simulator)',
        params: closedObject({ reference: Reference }),
        body: closedObject({ outcome: Type.Union([Type.Literal('confirmed'), Type.Literal('failed')]) }),
        response: {
          200: Type.Object({ reference: Type.String(), registeredOutcome: Type.String() }),
          ...errorResponses('invalid_state'),
        },
      },
    },
    async (request) => {
      const registered = await bank.registerOutcome(request.params.reference, request.body.outcome)
      if (!registered)
        throw new RailError('invalid_state', `no payout in progress has reference ${request.params.reference}`)
      return { reference: request.params.reference, registeredOutcome: request.body.outcome }
    },
  )

  registerReversalRoute({ app, bank, options })

  app.get(
    `${SANDBOX_BANK_PREFIX}/transfers/:reference`,
    {
      ...options,
      schema: {
        operationId: 'getBankTransfer',
        summary: 'Requery a transfer',
        description:
          "Requery: what happened to a transfer, by the client's reference, with its NIP response code and session id.",
        tags: ['sandbox bank'],
        params: closedObject({ reference: Reference }),
        response: { 200: TransferAnswerSchema, ...errorResponses('not_found') },
      },
    },
    async (request) => bank.requery(request.params.reference),
  )
}

/** The settlement simulator's reversal of a settled payout. */
function registerReversalRoute({ app, bank, options }: BankRoutes): void {
  app.post(
    `${SANDBOX_BANK_PREFIX}/transfers/:reference/reversal`,
    {
      ...options,
      schema: {
        operationId: 'reverseBankPayout',
        description:
          'Reverses a payout that settled with 00 (the sandbox settlement simulator): the money comes back to the settlement pool. A requery still answers 00; a provider dialect says the payout was reversed and announces it.',
        tags: ['sandbox bank'],
        summary: 'Reverse a settled payout (the sandbox settlement simulator)',
        params: closedObject({ reference: Reference }),
        response: {
          200: Type.Object({ reference: Type.String(), reversed: Type.Boolean() }),
          ...errorResponses('invalid_state'),
        },
      },
    },
    async (request) => {
      const reversed = await bank.reversePayout(request.params.reference)
      if (reversed !== 'reversed')
        throw new RailError(
          'invalid_state',
          `no payout settled with 00 and not yet reversed has reference ${request.params.reference}`,
        )
      return { reference: request.params.reference, reversed: true }
    },
  )
}

/** Each kind of transfer names exactly its own accounts: 422 naming the fields that do not fit. */
function assertFieldsFitKind(body: TransferRequest): void {
  const needs = {
    debitAccountNumber: body.kind !== 'credit' && body.kind !== 'payout',
    creditAccountNumber: body.kind === 'book' || body.kind === 'credit',
    destinationBankCode: body.kind === 'interbank' || body.kind === 'payout',
    destinationAccountNumber: body.kind === 'interbank' || body.kind === 'payout',
  }
  const wrong = (Object.keys(needs) as (keyof typeof needs)[]).filter(
    (field) => needs[field] !== (body[field] !== undefined),
  )
  if (wrong.length > 0) {
    const named = (Object.keys(needs) as (keyof typeof needs)[]).filter((field) => needs[field])
    throw new RailError('validation_error', `a ${body.kind} transfer names ${named.join(' and ')} only`, {
      fields: wrong.map((field) => ({ field, message: 'does not fit the kind' })),
    })
  }
}
