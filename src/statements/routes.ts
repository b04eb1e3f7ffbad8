// Balances and statements over HTTP (docs/statements.md): GET /api/v1/rail/balances, and the
// statements of a wallet (in the wallet API's style, as GET /wallet/customer), the float and collections, as
// JSON or, asked with `Accept: text/csv`, as CSV. Signed requests (docs/design.md §7).
import { Type, type Static, type TProperties } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { callerOf } from '../partners/auth.ts'
import type { Pool, Queryable } from '../platform/db.ts'
import type { HttpServer } from '../platform/http.ts'
import { withReadConnection, withReadSnapshot } from '../platform/read-pool.ts'
import { operations, route, SIGNED, type Operation } from '../platform/routes.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import { CAUSES } from './causes.ts'
import { CSV_CONTENT_TYPE, prefersCsv, statementCsv } from './csv.ts'
import {
  partnerBalances,
  partnerStatementAccount,
  STATEMENT_PAGE_DEFAULT,
  STATEMENT_PAGE_MAX,
  statementPage,
  walletStatementAccount,
  type StatementAccount,
  type StatementPage,
} from './service.ts'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])
const Kobo = Type.Integer()

const BalancesSchema = Type.Object(
  {
    currency: Type.String(),
    float: Type.Object({
      availableKobo: Type.Integer({
        description: 'What payouts can draw on now: booked less the holds of payouts in flight',
      }),
      bookedKobo: Kobo,
    }),
    collections: Type.Object({
      awaitingSettlementKobo: Type.Integer({
        description:
          'Collected and not yet settled: the collections account less payouts in flight from it (settlement to the bank, refunds)',
      }),
      bookedKobo: Kobo,
    }),
    escrow: Type.Object({
      heldKobo: Type.Integer({
        description: 'Held in escrow (funded, not yet released or refunded), less disbursements and refunds in flight',
      }),
      bookedKobo: Kobo,
    }),
    pendingPayouts: Type.Object({
      count: Type.Integer({
        description: 'Outbound transfers not yet final (pending, submitted, unknown), every origin',
      }),
      amountKobo: Type.Integer({ description: 'Their amounts, held in the ledger until each is final' }),
    }),
  },
  { title: 'Balances', description: "The caller's balances in kobo" },
)
export type BalancesJson = Static<typeof BalancesSchema>

const LineSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The ledger transfer' }),
    postedAt: Type.String({ format: 'date-time' }),
    cause: Type.Unsafe<string>({ type: 'string', enum: [...CAUSES] }),
    direction: Type.Unsafe<'credit' | 'debit'>({ type: 'string', enum: ['credit', 'debit'] }),
    amountKobo: Type.Integer({ minimum: 1 }),
    balanceAfterKobo: Type.Integer({ description: 'The booked balance right after this line' }),
    object: Nullable(
      Type.Object({
        type: Type.String(),
        id: Type.String(),
        reference: Nullable(
          Type.String({
            description:
              "The partner's handle of the object where it is not its id: a wallet move's reference, a payout's clientReference, an escrow's ref",
          }),
        ),
      }),
    ),
    narration: Nullable(Type.String()),
  },
  { title: 'StatementLine', description: 'One booked movement and the balance after it' },
)
export type StatementLineJson = Static<typeof LineSchema>

const StatementSchema = Type.Object(
  {
    account: Type.Object({
      type: Type.Unsafe<string>({ type: 'string', enum: ['wallet', 'float', 'collections'] }),
      walletId: Type.Optional(Type.String()),
      currency: Type.String(),
    }),
    openingBalanceKobo: Type.Integer({ description: "The booked balance before the page's oldest line" }),
    closingBalanceKobo: Type.Integer({ description: "The booked balance after the page's newest line" }),
    data: Type.Array(LineSchema),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'Statement', description: "A page of an account's statement, newest first" },
)
export type StatementJson = Static<typeof StatementSchema>

const RangeFields = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive: lines posted at or after it' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive: lines posted before it' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: STATEMENT_PAGE_MAX, default: STATEMENT_PAGE_DEFAULT })),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'nextCursor of the previous page (with the same from/to)',
    }),
  ),
} satisfies TProperties

interface RangeQuery {
  from?: string
  to?: string
  limit?: number
  cursor?: string
}

/** A statement's operation: its summary, and the description every statement shares after it. */
function statementText(summary: string) {
  const csv =
    'JSON by default; CSV (`text/csv; charset=utf-8`) when asked with `Accept: text/csv`, the next cursor then in `X-Next-Cursor`. Bound with `from` and `to`; page with `cursor` and `limit`.'
  return { summary, description: `${summary}, each with its cause. ${csv}` }
}

/** What the OpenAPI document says of the balance and statement operations. */
const OPS = operations('statements', {
  getBalances: {
    summary: "The caller's balances in kobo: float, collections, escrow, payouts in flight",
    description:
      "The caller's balances in kobo: the float, collections not yet settled, money held in escrow, and payouts in flight.",
  },
  getWalletStatement: statementText(
    "A wallet's statement: its booked movements newest first, each with the balance after it",
  ),
  getFloatStatement: statementText(
    "The float account's statement: its booked movements newest first, each with the balance after it",
  ),
  getCollectionsStatement: statementText(
    "The collections account's statement: its booked movements newest first, each with the balance after it",
  ),
})

function statementRoute<E extends TProperties>(operation: Operation, extra: E) {
  const querystring = closedObject({ ...extra, ...RangeFields })
  return route(SIGNED, operation, { querystring, response: { 200: StatementSchema, ...errorResponses('not_found') } })
}

export function registerStatementRoutes(app: HttpServer, deps: { pool: Pool }): void {
  app.get(
    '/api/v1/rail/balances',
    route(SIGNED, OPS.getBalances, {
      querystring: closedObject({}),
      response: { 200: BalancesSchema, ...errorResponses() },
    }),
    async (request) => withReadSnapshot(deps.pool, (reader) => partnerBalances(reader, callerOf(request).partner.id)),
  )
  const wallet = {
    customerId: Type.String({ minLength: 1, maxLength: 64, description: 'The wallet handle (walletId)' }),
  }
  app.get('/wallet/statement', statementRoute(OPS.getWalletStatement, wallet), async (request, reply) =>
    sendStatement(deps.pool, request, reply, (reader) =>
      walletStatementAccount(reader, callerOf(request).partner.id, request.query.customerId),
    ),
  )
  for (const type of ['float', 'collections'] as const) {
    const operation = type === 'float' ? OPS.getFloatStatement : OPS.getCollectionsStatement
    app.get(`/api/v1/rail/${type}/statement`, statementRoute(operation, {}), async (request, reply) =>
      sendStatement(deps.pool, request, reply, (reader) =>
        partnerStatementAccount(reader, callerOf(request).partner.id, type),
      ),
    )
  }
}

/** The account and its page are read on one connection: the replica's when it is current enough (platform/read-pool.ts). */
async function sendStatement(
  pool: Pool,
  request: FastifyRequest & { query: RangeQuery },
  reply: FastifyReply,
  accountOf: (db: Queryable) => Promise<StatementAccount>,
) {
  const query = request.query
  const page = await withReadConnection(pool, async (reader) =>
    statementPage(reader, await accountOf(reader), {
      from: query.from === undefined ? undefined : new Date(query.from),
      to: query.to === undefined ? undefined : new Date(query.to),
      limit: query.limit ?? STATEMENT_PAGE_DEFAULT,
      cursor: query.cursor,
    }),
  )
  void reply.header('Vary', 'Accept') // one URL, two representations
  if (prefersCsv(request.headers.accept)) {
    if (page.nextCursor !== null) void reply.header('X-Next-Cursor', page.nextCursor)
    void reply
      .header('X-Opening-Balance-Kobo', String(page.openingBalanceKobo))
      .header('X-Closing-Balance-Kobo', String(page.closingBalanceKobo))
    return reply.type(CSV_CONTENT_TYPE).send(statementCsv(page.lines))
  }
  return toStatementJson(page)
}

function toStatementJson(page: StatementPage): StatementJson {
  const { type, walletId, currency } = page.account
  return {
    account: walletId === undefined ? { type, currency } : { type, walletId, currency },
    openingBalanceKobo: page.openingBalanceKobo,
    closingBalanceKobo: page.closingBalanceKobo,
    data: page.lines.map((line) => ({ ...line, postedAt: line.postedAt.toISOString() })),
    nextCursor: page.nextCursor,
  }
}
