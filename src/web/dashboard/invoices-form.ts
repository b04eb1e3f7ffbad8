// Reading the dashboard's forms into the requests the services take: every field checked for
// presence, type, length, range and control characters before anything is read or written, so a
// refused form changes nothing. The invoice form's fields are those of POST /api/v1/rail/invoice
// (its currency is left out: only naira is served), with the amount typed in naira.
import type { InvoiceRequest } from '../../invoices/service.ts'
import { parseNaira } from './amounts.ts'
import { isUuid, type FormBody } from './http.ts'

/** A form field that is not acceptable, and why (shown to the partner as it is). */
export class FormError extends Error {}

/** What a form gave, or why it was refused. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string }

const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/
const PHONE = /^\+?[0-9]{7,15}$/
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/
// Naira with at most two decimals, optionally with thousands commas: 12500, 12,500.50.
// What a datetime-local input sends: a wall-clock time with no zone (read as Lagos time).
const LOCAL_DATE_TIME = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?$/
/** Lagos keeps West Africa Time all year (no daylight saving). */
const LAGOS_OFFSET = '+01:00'
const LAGOS_OFFSET_MS = 60 * 60_000
export const INVOICE_TITLE_MAX_CHARS = 200
export const INVOICE_DESCRIPTION_MAX_CHARS = 2000
export const CUSTOMER_NAME_MAX_CHARS = 100
export const CUSTOMER_ID_MAX_CHARS = 64
const EMAIL_MAX_CHARS = 254
const URL_MAX_CHARS = 2048

/** C0 and C1 control characters (and DEL); a multi-line field may hold line feeds and tabs, as the API's free text may. */
function hasControlCharacters(value: string, multiline: boolean): boolean {
  for (const character of value) {
    const code = character.codePointAt(0)!
    if (multiline && (character === '\n' || character === '\t')) continue
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}

interface TextRule {
  label: string
  max: number
  required?: boolean
  multiline?: boolean
}

/** A text field: trimmed; absent or empty is undefined (refused when required). */
export function textField(body: FormBody, name: string, rule: TextRule): string | undefined {
  const raw = body[name]
  if (raw !== undefined && typeof raw !== 'string') throw new FormError(`${rule.label} must be text.`)
  const value = (raw ?? '').replace(/\r\n/g, '\n').trim()
  if (value === '') {
    if (rule.required) throw new FormError(`${rule.label} is required.`)
    return undefined
  }
  if (value.length > rule.max) throw new FormError(`${rule.label} is longer than ${rule.max} characters.`)
  if (hasControlCharacters(value, rule.multiline ?? false))
    throw new FormError(`${rule.label} contains control characters.`)
  return value
}

/** An amount typed in naira (₦12,500.50) as integer kobo, between 1 kobo and the largest instruction. */
export function nairaField(body: FormBody, name: string, label: string, maximumKobo: number): number {
  const amountKobo = parseNaira(textField(body, name, { label, max: 32, required: true }))
  if (amountKobo === undefined) throw new FormError(`${label} must be an amount in naira, such as 12500 or 12,500.50.`)
  if (amountKobo > BigInt(maximumKobo))
    throw new FormError(`${label} is above the maximum of one instruction (${maximumKobo} kobo).`)
  if (amountKobo < 1n) throw new FormError(`${label} must be at least ₦0.01.`)
  return Number(amountKobo)
}

/** A datetime-local value read as Lagos time, as an ISO instant; undefined when empty. */
export function lagosDateTimeField(body: FormBody, name: string, label: string): string | undefined {
  const text = textField(body, name, { label, max: 19 })
  if (text === undefined) return undefined
  const parts = LOCAL_DATE_TIME.exec(text)
  const at = parts ? new Date(`${text}${parts[6] === undefined ? ':00' : ''}${LAGOS_OFFSET}`) : undefined
  // A date the calendar does not have (31 June) is refused, not rolled over.
  const lagos = at && !Number.isNaN(at.getTime()) ? new Date(at.getTime() + LAGOS_OFFSET_MS).toISOString() : ''
  if (!parts || lagos.slice(0, 16) !== `${parts[1]}-${parts[2]}-${parts[3]}T${parts[4]}:${parts[5]}`)
    throw new FormError(`${label} must be a date and time.`)
  return at!.toISOString()
}

export function emailField(body: FormBody, name: string, label: string): string | undefined {
  const email = textField(body, name, { label, max: EMAIL_MAX_CHARS })
  if (email !== undefined && !EMAIL.test(email)) throw new FormError(`${label} must be an email address.`)
  return email
}

function urlField(body: FormBody, name: string, label: string): string | undefined {
  const url = textField(body, name, { label, max: URL_MAX_CHARS })
  if (url === undefined) return undefined
  // Only the characters a URI may hold (RFC 3986), as the API's uri format: no spaces, quotes or angle brackets.
  if (!/^https?:\/\//i.test(url) || !URI_CHARACTERS.test(url) || !URL.canParse(url))
    throw new FormError(`${label} must be an http or https URL.`)
  return url
}

/** The hidden random reference of a create form: a double-submitted form replays instead of creating twice. */
export function referenceField(body: FormBody): string {
  if (!isUuid(body.reference)) throw new FormError('This form has no valid reference; open the form again.')
  return body.reference
}

/** Runs a form reader, turning its first refused field into a message. */
export function parseForm<T>(read: () => T): Parsed<T> {
  try {
    return { ok: true, value: read() }
  } catch (error) {
    if (error instanceof FormError) return { ok: false, message: error.message }
    throw error
  }
}

function customerOf(body: FormBody): InvoiceRequest['customer'] {
  const customer = {
    name: textField(body, 'customerName', { label: 'Customer name', max: CUSTOMER_NAME_MAX_CHARS }),
    email: emailField(body, 'customerEmail', 'Customer email'),
    phone: textField(body, 'customerPhone', { label: 'Customer phone', max: 16 }),
    customerId: textField(body, 'customerId', { label: 'Your customer id', max: CUSTOMER_ID_MAX_CHARS }),
  }
  if (customer.phone !== undefined && !PHONE.test(customer.phone))
    throw new FormError('Customer phone must be 7 to 15 digits, optionally after a +.')
  // Only the fields given: the request (and so its idempotency hash) is the same for the same form.
  const given = Object.fromEntries(Object.entries(customer).filter(([, value]) => value !== undefined))
  return Object.keys(given).length > 0 ? given : undefined
}

/** The "New invoice" form as the create request of POST /api/v1/rail/invoice. */
export function invoiceRequestOf(body: FormBody, maximumKobo: number): Parsed<InvoiceRequest> {
  return parseForm(() => {
    const request: InvoiceRequest = {
      reference: referenceField(body),
      title: textField(body, 'title', { label: 'Title', max: INVOICE_TITLE_MAX_CHARS, required: true })!,
      amountKobo: nairaField(body, 'amount', 'Amount', maximumKobo),
    }
    const description = textField(body, 'description', {
      label: 'Description',
      max: INVOICE_DESCRIPTION_MAX_CHARS,
      multiline: true,
    })
    const customer = customerOf(body)
    const dueAt = lagosDateTimeField(body, 'dueAt', 'Due')
    const callbackUrl = urlField(body, 'callbackUrl', 'Callback URL')
    if (description !== undefined) request.description = description
    if (customer !== undefined) request.customer = customer
    if (dueAt !== undefined) request.dueAt = dueAt
    if (callbackUrl !== undefined) request.callbackUrl = callbackUrl
    if (body.publishOnCreate !== undefined && body.publishOnCreate !== 'yes')
      throw new FormError('Publish at once is yes or not given.')
    if (body.publishOnCreate === 'yes') request.publishOnCreate = true
    return request
  })
}
