// The one maximum amount of an instruction, and the one mechanism that enforces it on every route.
// A body field declared with AmountKobo() is checked against the configured maximum after the
// schema has accepted the body and before any handler runs: above it, 422 amount_above_limit and
// nothing is changed. Keeping every single amount far below 2^53 − 1 is what lets the totals built
// from them (balances, pools, invoice payments) stay exact in SQL BIGINT and in JavaScript numbers.
import { Type, type IntegerOptions, type TInteger } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler, RouteOptions } from 'fastify'
import { RailError } from './errors.ts'

/**
 * ₦250,000,000 (25,000,000,000 kobo): the largest single NIP transfer the CBN allows anyone — a
 * corporate customer's "highly secured" online transfer with an indemnity, as revised in 2022
 * (individuals: ₦25,000,000). No one instruction on the Nigerian rails carries more.
 */
export const MAX_AMOUNT_KOBO_DEFAULT = 25_000_000_000

/** Marks an amount field in a body schema; also visible in the OpenAPI document, whose `maximum` is the configured one. */
export const AMOUNT_KEYWORD = 'x-rail-amount'

/**
 * An integer kobo amount of one instruction. The schema keeps it a safe integer; the configured
 * maximum is checked by installAmountLimit, so that it can be configured and refused with its own code.
 */
export function AmountKobo(options: IntegerOptions = {}): TInteger {
  return Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...options, [AMOUNT_KEYWORD]: true })
}

/** The refusal of an amount above the maximum of one instruction. */
export function amountAboveLimit(field: string, amountKobo: number, maximumKobo: number): RailError {
  return new RailError(
    'amount_above_limit',
    `${field}: ${amountKobo} kobo is above the maximum of one instruction, ${maximumKobo} kobo`,
    {
      field,
      maximumKobo,
    },
  )
}

/** Throws amount_above_limit when `amountKobo` exceeds `maximumKobo` (for callers outside HTTP, such as the CLI). */
export function assertAmountWithinLimit(amountKobo: number, maximumKobo: number, field = 'amountKobo'): void {
  if (amountKobo > maximumKobo) throw amountAboveLimit(field, amountKobo, maximumKobo)
}

const configuredMaximums = new WeakMap<object, number>()

/** The maximum an app checks amounts against (the OpenAPI document states it as each amount's `maximum`). */
export function amountMaximumOf(app: object): number {
  return configuredMaximums.get(app) ?? MAX_AMOUNT_KOBO_DEFAULT
}

/**
 * Every route registered after this call whose body schema declares AmountKobo() fields gets a
 * check of those fields against `maxAmountKobo`. It runs after authentication and schema
 * validation (a preHandler, ahead of the route's own), so nothing has been read or written yet.
 */
export function installAmountLimit(app: FastifyInstance, settings: { maxAmountKobo: number }): void {
  const maximumKobo = settings.maxAmountKobo
  if (!Number.isSafeInteger(maximumKobo) || maximumKobo < 1)
    throw new Error(`the maximum amount must be a positive safe integer, got ${maximumKobo}`)
  configuredMaximums.set(app, maximumKobo)
  app.addHook('onRoute', (route: RouteOptions) => {
    const paths = amountPaths(route.schema?.body, [])
    if (paths.length === 0) return
    const check: preHandlerHookHandler = async (request: FastifyRequest, _reply: FastifyReply) => {
      for (const path of paths) {
        for (const { field, value } of valuesAt(request.body, path, [])) {
          if (typeof value === 'number' && value > maximumKobo) throw amountAboveLimit(field, value, maximumKobo)
        }
      }
    }
    const existing =
      route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]
    route.preHandler = [check, ...existing]
  })
}

/** A path to an amount in a body: property names, '*' for every item of an array. */
type AmountPath = readonly string[]

/** The paths of every AmountKobo() field in a schema (objects, arrays and unions are followed). */
function amountPaths(schema: unknown, at: string[]): AmountPath[] {
  if (schema === null || typeof schema !== 'object') return []
  const node = schema as Record<string, unknown>
  if (node[AMOUNT_KEYWORD] === true) return [at]
  const found: AmountPath[] = []
  if (node.properties && typeof node.properties === 'object') {
    for (const [name, property] of Object.entries(node.properties)) found.push(...amountPaths(property, [...at, name]))
  }
  if (node.items) found.push(...amountPaths(node.items, [...at, '*']))
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(node[key])) for (const member of node[key]) found.push(...amountPaths(member, at))
  }
  // A union can name the same field twice; check it once.
  return [...new Map(found.map((path) => [path.join('\u0000'), path])).values()]
}

function* valuesAt(value: unknown, path: AmountPath, at: string[]): Generator<{ field: string; value: unknown }> {
  if (path.length === 0) {
    yield { field: at.join('.'), value }
    return
  }
  const [head, ...rest] = path
  if (head === '*') {
    if (Array.isArray(value))
      for (const [index, item] of value.entries()) yield* valuesAt(item, rest, [...at, String(index)])
  } else if (value !== null && typeof value === 'object' && Object.hasOwn(value, head!)) {
    yield* valuesAt((value as Record<string, unknown>)[head!], rest, [...at, head!])
  }
}
