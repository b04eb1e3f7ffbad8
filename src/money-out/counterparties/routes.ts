// Counterparty routes: create, list, read, and PATCH (rename, archive) — docs/contracts/collections-and-payouts.md §Counterparties, docs/design.md §10.
import { Type, type Static } from '@sinclair/typebox'
import { findBank } from '../../banking/nip/banks.ts'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import type { Pool } from '../../platform/db.ts'
import type { HttpServer } from '../../platform/http.ts'
import { getOne, getPage, operations, route, SIGNED, SIGNED_IN_TRANSACTION } from '../../platform/routes.ts'
import { closedObject, errorResponses, IdParamsSchema, NubanSchema, PageQuerySchema } from '../../platform/schemas.ts'
import {
  COUNTERPARTIES_PAGE_MAX,
  createCounterparty,
  getCounterparty,
  listCounterparties,
  updateCounterparty,
  type Counterparty,
} from './service.ts'

const CounterpartySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    partnerId: Type.String({ format: 'uuid' }),
    name: Type.String({ description: "The partner's label (the account name unless renamed)" }),
    accountNumber: Type.String(),
    bankCode: Type.String(),
    bankName: Type.Union([Type.String(), Type.Null()]),
    accountName: Type.String({ description: 'The name given for the account at its first use' }),
    verifiedAccountName: Type.Union([Type.String(), Type.Null()], {
      description: "The bank's name for the account (name enquiry), once a payout asked",
    }),
    archived: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'Counterparty', description: 'A saved beneficiary: a bank account the partner pays' },
)
export type CounterpartyJson = Static<typeof CounterpartySchema>

function toCounterpartyJson(counterparty: Counterparty): CounterpartyJson {
  return {
    id: counterparty.id,
    partnerId: counterparty.partnerId,
    name: counterparty.name,
    accountNumber: counterparty.accountNumber,
    bankCode: counterparty.bankCode,
    bankName: findBank(counterparty.bankCode)?.name ?? null,
    accountName: counterparty.accountName,
    verifiedAccountName: counterparty.verifiedAccountName,
    archived: counterparty.archived,
    createdAt: counterparty.createdAt.toISOString(),
    updatedAt: counterparty.updatedAt.toISOString(),
    lastUsedAt: counterparty.lastUsedAt?.toISOString() ?? null,
  }
}

const CreateBodySchema = closedObject({
  accountNumber: NubanSchema(),
  bankCode: Type.String({ pattern: '^[0-9]{3,6}$' }),
  accountName: Type.String({ minLength: 1, maxLength: 100 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
})

const ListQuerySchema = PageQuerySchema(
  {
    archived: Type.Optional(
      Type.Boolean({ description: 'true: only archived counterparties; false: only active ones; absent: both' }),
    ),
  },
  COUNTERPARTIES_PAGE_MAX,
)

/** What the OpenAPI document says of the counterparty operations. */
const OPS = operations('counterparties', {
  createCounterparty: {
    summary: 'Save a beneficiary (201; the same account again answers the saved one with 200)',
    description:
      'Saves a beneficiary account. Saving an account already saved answers the saved counterparty with 200 instead of 201. Payouts also save their beneficiary on the first payout to an account.',
  },
  listCounterparties: {
    summary: "The caller's counterparties, newest first",
    description:
      "The caller's saved beneficiaries, newest first, optionally only active or archived ones; page with `cursor` and `limit`.",
  },
  getCounterparty: {
    summary: 'One counterparty',
    description: "One saved beneficiary by its id; another partner's is 404.",
  },
  updateCounterparty: {
    summary: 'Rename or archive a counterparty (soft state only)',
    description: 'Renames a counterparty or archives or restores it; the account it names never changes.',
  },
})

export function registerCounterpartyRoutes(app: HttpServer, deps: { pool: Pool }): void {
  app.post(
    '/api/v1/rail/counterparties',
    route(SIGNED, OPS.createCounterparty, {
      body: CreateBodySchema,
      response: { 200: CounterpartySchema, 201: CounterpartySchema, ...errorResponses() },
    }),
    async (request, reply) => {
      const saved = await createCounterparty(deps.pool, callerOf(request).partner.id, request.body)
      return reply.code(saved.created ? 201 : 200).send(toCounterpartyJson(saved.counterparty))
    },
  )
  app.get(
    '/api/v1/rail/counterparties',
    getPage(OPS.listCounterparties, ListQuerySchema, CounterpartySchema),
    async (request) => {
      const page = await listCounterparties(deps.pool, { ...pageRequestOf(request), archived: request.query.archived })
      return { data: page.counterparties.map(toCounterpartyJson), nextCursor: page.nextCursor }
    },
  )
  app.get(
    '/api/v1/rail/counterparties/:id',
    getOne(OPS.getCounterparty, IdParamsSchema, CounterpartySchema),
    async (request) =>
      toCounterpartyJson(await getCounterparty(deps.pool, callerOf(request).partner.id, request.params.id)),
  )
  app.patch(
    '/api/v1/rail/counterparties/:id',
    route(SIGNED_IN_TRANSACTION, OPS.updateCounterparty, {
      params: IdParamsSchema,
      body: closedObject(
        {
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          archived: Type.Optional(Type.Boolean()),
        },
        { minProperties: 1 },
      ),
      response: { 200: CounterpartySchema, ...errorResponses('not_found') },
    }),
    async (request) => {
      const { params, body, idempotencyKey } = request
      const partnerId = callerOf(request).partner.id
      return toCounterpartyJson(await updateCounterparty(deps.pool, partnerId, params.id, body, idempotencyKey))
    },
  )
}
