// What the sandbox bank's route tables share: the path prefix, the options of every business route
// (the bank's own signature, fault injection), and the schemas more than one resource uses.
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AmountKobo } from '../platform/amounts.ts'
import type { HttpServer } from '../platform/http.ts'
import type { SandboxBank } from './service.ts'
import { NubanSchema } from '../platform/schemas.ts'

export const SANDBOX_BANK_PREFIX = '/sandbox-bank/v1'

export const AccountNumber = NubanSchema()
export const BankCode = Type.String({ pattern: '^[0-9]{3}$' })
export const Amount = AmountKobo()
export const AccountSchema = Type.Object({
  bankCode: Type.String(),
  accountNumber: Type.String(),
  accountName: Type.String(),
  balanceKobo: Type.Integer(),
  status: Type.String(),
})
export const NipFields = { responseCode: Type.String(), responseMessage: Type.String() }
export const ClientName = Type.String({
  pattern: '^[a-z0-9-]{1,64}$',
  description: 'The provider profile the account belongs to',
})

/** The options of every route of the bank's business (all but the fault switch). */
export interface BankRouteOptions {
  /** No Rail authentication (the bank checks its own signature), no admission or rate limit: the bank is another system. */
  config: { auth: 'none'; admission: false; rateLimited: false }
  /** The bank's signature check. */
  preValidation: (request: FastifyRequest) => Promise<void>
  /** Fault injection. */
  preHandler: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
}

/** What a resource's route table is registered with. */
export interface BankRoutes {
  app: HttpServer
  bank: SandboxBank
  options: BankRouteOptions
}
