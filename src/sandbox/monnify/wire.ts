// How Monnify speaks: every answer in one envelope (requestSuccessful, responseMessage,
// responseCode, responseBody), amounts in naira with up to two decimals, and its date formats.
// Amounts cross between naira and kobo by decimal string arithmetic only: a float never holds money.
import type { FastifyReply } from 'fastify'

/** Monnify's code of a request it carried out. */
export const SUCCESS_CODE = '0'
/** Monnify's code of a request it refused or could not carry out (its generic error code). */
export const ERROR_CODE = '99'

export interface Envelope {
  requestSuccessful: boolean
  responseMessage: string
  responseCode: string
  responseBody?: unknown
}

export function success(responseBody: unknown): Envelope {
  return { requestSuccessful: true, responseMessage: 'success', responseCode: SUCCESS_CODE, responseBody }
}

/** A request carried out: 200 with Monnify's envelope around the answer. */
export function ok(reply: FastifyReply, responseBody: unknown): FastifyReply {
  return reply.code(200).send(success(responseBody))
}

/** A refusal in Monnify's shape, sent with its HTTP status. */
export function refuse(
  reply: FastifyReply,
  httpStatus: number,
  responseMessage: string,
  responseCode = ERROR_CODE,
): FastifyReply {
  const body: Envelope = { requestSuccessful: false, responseMessage, responseCode }
  return reply.code(httpStatus).send(body)
}

/** The most kobo a wire amount may carry: every kobo amount is an exact JavaScript integer. */
const AMOUNT_KOBO_MAX = Number.MAX_SAFE_INTEGER
const NAIRA_PATTERN = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/**
 * A naira amount as Monnify sends it (a JSON number such as 1500.5, or its string) in kobo, or the
 * reason it is refused: more than two decimals, not positive, or out of range. A parsed JSON number
 * prints as the shortest decimal that reads back as itself, which is the literal as written for
 * any amount within range; an exponent form is refused rather than guessed.
 */
export function nairaToKobo(amount: unknown): { amountKobo: number } | { refused: string } {
  const text =
    typeof amount === 'number' && Number.isFinite(amount)
      ? String(amount)
      : typeof amount === 'string'
        ? amount.trim()
        : undefined
  const match = text === undefined ? null : NAIRA_PATTERN.exec(text)
  if (!match) return { refused: 'amount must be a positive number of naira' }
  const decimals = match[2] ?? ''
  if (decimals.length > 2) return { refused: 'amount must have at most 2 decimal places' }
  const koboText = `${match[1]}${decimals.padEnd(2, '0')}`.replace(/^0+(?=.)/, '')
  if (koboText.length > String(AMOUNT_KOBO_MAX).length || Number(koboText) > AMOUNT_KOBO_MAX)
    return { refused: 'amount is too large' }
  const amountKobo = Number(koboText)
  if (amountKobo <= 0) return { refused: 'amount must be greater than zero' }
  return { amountKobo }
}

/** Kobo as Monnify's naira amount: a JSON number that prints with the exact decimals (123456 → 1234.56). */
export function koboToNaira(amountKobo: number): number {
  if (!Number.isSafeInteger(amountKobo)) throw new Error(`not an integer amount of kobo: ${amountKobo}`)
  const sign = amountKobo < 0 ? '-' : ''
  const digits = String(Math.abs(amountKobo)).padStart(3, '0')
  return Number(`${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`)
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0')

/** Monnify's API timestamps: 2024-05-01T09:30:00.000+0000 (UTC). */
export function apiTime(at: Date): string {
  return `${at.toISOString().slice(0, 23)}+0000`
}

/** The time in a collection webhook's paidOn: 2024-05-01 09:30:00.000 (UTC). */
export function paidOnTime(at: Date): string {
  return at.toISOString().slice(0, 23).replace('T', ' ')
}

/** The time in a disbursement webhook's createdOn and completedOn: 01/05/2024 9:30:00 AM (UTC). */
export function disbursementTime(at: Date): string {
  const hours = at.getUTCHours()
  const clock = `${hours % 12 === 0 ? 12 : hours % 12}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())} ${hours < 12 ? 'AM' : 'PM'}`
  return `${pad(at.getUTCDate())}/${pad(at.getUTCMonth() + 1)}/${at.getUTCFullYear()} ${clock}`
}

/** A query string parameter as a single string, or undefined. */
export function queryValue(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/** A page number and size from the query (Monnify pages from 0), within limits. */
export function pageOf(
  query: unknown,
  pageName: string,
  sizeName: string,
  sizeMax: number,
): { page: number; size: number } {
  const page = Number(queryValue(query, pageName) ?? '0')
  const size = Number(queryValue(query, sizeName) ?? '10')
  return {
    page: Number.isSafeInteger(page) && page >= 0 ? page : 0,
    size: Number.isSafeInteger(size) && size >= 1 ? Math.min(size, sizeMax) : 10,
  }
}

/** One page of a list, as Monnify's paged answers give it. */
export function paged<T>(all: readonly T[], page: number, size: number): Record<string, unknown> {
  const content = all.slice(page * size, page * size + size)
  const totalPages = Math.ceil(all.length / size)
  return {
    content,
    pageable: {
      sort: { sorted: false, unsorted: true, empty: true },
      pageSize: size,
      pageNumber: page,
      offset: page * size,
      unpaged: false,
      paged: true,
    },
    totalElements: all.length,
    totalPages,
    last: page >= totalPages - 1,
    first: page === 0,
    sort: { sorted: false, unsorted: true, empty: true },
    numberOfElements: content.length,
    size,
    number: page,
    empty: content.length === 0,
  }
}
