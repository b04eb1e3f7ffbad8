// What the collections pages share: their sub-navigation, the page size and cursor of their
// lists, the "older" link that keeps a list's filters, and how statuses read.
import type { FastifyRequest } from 'fastify'
import { html, type Html } from '../../platform/html.ts'
import { isUuid } from './http.ts'

/** Every list shows this many, newest first; "Older" follows the cursor. */
export const LIST_PAGE = 25

export const COLLECTIONS_PATH = '/dashboard/collections'

const TABS: readonly { href: string; label: string }[] = [
  { href: COLLECTIONS_PATH, label: 'Summary' },
  { href: `${COLLECTIONS_PATH}/intents`, label: 'Payment intents' },
  { href: `${COLLECTIONS_PATH}/virtual-accounts`, label: 'Virtual accounts' },
  { href: `${COLLECTIONS_PATH}/fbo`, label: 'FBO accounts' },
  { href: `${COLLECTIONS_PATH}/credits`, label: 'Inbound credits' },
]

/** The links between the collections pages, above each one's content. */
export function collectionsNav(): Html {
  return html`<nav class="subnav" aria-label="Collections">${TABS.map((tab) => html`<a href="${tab.href}">${tab.label}</a> `)}</nav>`
}

/** The query string of a list page, as given (each page keeps only the values it knows). */
export function queryOf(request: FastifyRequest): Record<string, string | undefined> {
  return request.query as Record<string, string | undefined>
}

/** The cursor of a list page: a well-formed id, else none (the first page). */
export function cursorOf(request: FastifyRequest): string | undefined {
  const cursor = queryOf(request).cursor
  return isUuid(cursor) ? cursor : undefined
}

/** One of the allowed values, else none: an invalid filter is ignored, not refused. */
export function oneOf<T extends string>(allowed: readonly T[], value: string | undefined): T | undefined {
  return allowed.includes(value as T) ? (value as T) : undefined
}

/** The link to a list's next page with the same filters, or nothing on the last page. */
export function olderLink(
  path: string,
  filter: Record<string, string | undefined>,
  nextCursor: string | null,
  label: string,
): Html | '' {
  if (!nextCursor) return ''
  const kept = Object.entries(filter).filter((entry): entry is [string, string] => entry[1] !== undefined)
  const query = new URLSearchParams([...kept, ['cursor', nextCursor]]).toString()
  return html`<p><a href="${path}?${query}" id="older">${label}</a></p>`
}

/** A status as people read it: `partially_paid` → "partially paid". */
export function statusLabel(status: string): string {
  return status.replaceAll('_', ' ')
}

/** A GET filter form's status select: "Any" and the allowed statuses, the chosen one selected. */
export function statusSelect(allowed: readonly string[], chosen: string | undefined, anyLabel = 'Any'): Html {
  return html`<label>Status <select name="status"><option value="">${anyLabel}</option>${allowed.map(
    (status) =>
      html`<option value="${status}"${status === chosen ? html` selected` : ''}>${statusLabel(status)}</option>`,
  )}</select></label>`
}
