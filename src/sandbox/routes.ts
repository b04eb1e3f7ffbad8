// The sandbox bank's HTTP interface, mounted under /sandbox-bank/v1. Every request is signed by
// the caller (the sandbox provider adapter) with the bank's shared secret, using Rail's own
// request-signing scheme with X-Sandbox-Timestamp and X-Sandbox-Signature headers, and checked by
// Rail's one verifier. The route tables are by resource: accounts, transfers, virtual accounts
// (with the credits paid into them); the fault switch is here.
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { systemClock, type Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import type { HttpServer } from '../platform/http.ts'
import { TIMESTAMP_TOLERANCE_S } from '../client/signing.ts'
import { verifyRequestSignature } from '../platform/request-signature.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import { registerAccountRoutes } from './account-routes.ts'
import { decideFault, readFaults, writeFaults, type FaultDecision } from './faults.ts'
import { magicAmount } from './magic.ts'
import { SANDBOX_BANK_PREFIX, type BankRouteOptions } from './route-schemas.ts'
import type { SandboxBank } from './service.ts'
import { registerTransferRoutes } from './transfer-routes.ts'
import { registerVirtualAccountRoutes } from './virtual-account-routes.ts'

export { SANDBOX_BANK_PREFIX } from './route-schemas.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by fault injection: the request is processed, its answer dropped. */
    loseResponse: boolean
  }
}

const FaultsSchema = Type.Object({
  noAnswerRate: Type.Number(),
  errorRate: Type.Number(),
  lostResponseRate: Type.Number(),
  delayMs: Type.Integer(),
})

export function registerSandboxBankRoutes(
  app: HttpServer,
  deps: { bank: SandboxBank; secret: string; pool: Pool; clock?: Clock; requestValidityS?: number },
): void {
  const clock = deps.clock ?? systemClock
  // A request signed longer ago than this is refused: a stalled sender's late call moves nothing.
  const toleranceS = deps.requestValidityS ?? TIMESTAMP_TOLERANCE_S
  // The bank checks its own signature, below. It is another system with its own connections, so it
  // never queues behind Rail's requests, which may be waiting on it.
  const config = { auth: 'none' as const, admission: false as const, rateLimited: false as const }
  const preValidation = async (request: FastifyRequest) => verifyBankSignature(request, deps.secret, clock, toleranceS)
  // Faults apply to the bank's business, not to the switch that sets them.
  const preHandler = async (request: FastifyRequest, reply: FastifyReply) =>
    injectFault(deps.pool, deps.bank, request, reply)
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
        operationId: 'setBankFaults',
        description:
          'Turns fault injection on or off: the share of requests that get no answer, an error, or whose answer is lost after processing, and a delay before each. All zero turns it off.',
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

  const options: BankRouteOptions = { config, preValidation, preHandler }
  const routes = { app, bank: deps.bank, options }
  registerAccountRoutes(routes)
  registerTransferRoutes(routes)
  registerVirtualAccountRoutes(routes)
}

/**
 * What a request means to fault injection: its amount in kobo (a magic amount picks its fault) and,
 * for a transfer, its reference (a lost request is dropped the first time only). The sandbox
 * provider dialects (/sandbox-paystack, /sandbox-monnify) read these from their own fields.
 */
export interface FaultSubject {
  amountKobo?: number
  /** Set for a request that submits a transfer: its reference. */
  transferReference?: string
}

/**
 * A lost request: the first transfer of a reference is dropped unprocessed (the bank records only
 * that it dropped it), and a resend of it is processed. Elsewhere (an inbound credit, which has no
 * reference of the caller's) every such request is dropped.
 */
async function dropDecision(bank: SandboxBank, subject: FaultSubject): Promise<FaultDecision> {
  if (subject.transferReference === undefined) return 'no_answer'
  return (await bank.dropFirstSubmission(subject.transferReference)) ? 'no_answer' : 'none'
}

async function injectFault(pool: Pool, bank: SandboxBank, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const body = request.body as { amountKobo?: unknown; reference?: unknown } | undefined
  const isTransfer = request.method === 'POST' && request.routeOptions.url === `${SANDBOX_BANK_PREFIX}/transfers`
  await injectBankFault(pool, bank, request, reply, {
    amountKobo: typeof body?.amountKobo === 'number' ? body.amountKobo : undefined,
    transferReference: isTransfer && typeof body?.reference === 'string' ? body.reference : undefined,
  })
}

/**
 * The bank's fault injection for one request: the switched-on delay, then a magic amount's fault
 * for this request alone, or else the switched-on rates. Shared by the sandbox bank's own routes
 * and the provider dialects served on its books.
 */
export async function injectBankFault(
  pool: Pool,
  bank: SandboxBank,
  request: FastifyRequest,
  reply: FastifyReply,
  subject: FaultSubject,
): Promise<void> {
  const faults = await readFaults(pool)
  if (faults.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.delayMs))
  const magic = subject.amountKobo === undefined ? undefined : magicAmount(subject.amountKobo)
  const decision =
    magic?.kind === 'fault'
      ? magic.fault
      : magic?.kind === 'drop_first_submission'
        ? await dropDecision(bank, subject)
        : decideFault(faults)
  if (decision === 'no_answer') {
    reply.hijack()
    request.raw.socket?.destroy()
  } else if (decision === 'error') {
    throw new Error('sandbox bank fault injection: internal error')
  } else if (decision === 'lose_response') {
    request.loseResponse = true
  }
}

function verifyBankSignature(request: FastifyRequest, secret: string, clock: Clock, toleranceS: number): void {
  const verified = verifyRequestSignature({
    secret,
    toleranceS,
    timestamp: request.headers['x-sandbox-timestamp'],
    signature: request.headers['x-sandbox-signature'],
    clock,
    method: request.method,
    pathWithQuery: request.raw.url ?? '',
    body: request.rawBody ?? '',
  })
  if (!verified.ok) throw new RailError('unauthorized', 'Missing or invalid credentials')
}
