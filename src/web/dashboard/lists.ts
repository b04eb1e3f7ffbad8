// What the dashboard's lists share: the page size and cursor, the query's filters (an invalid
// value is ignored, not refused), the filter form's selects, the "older" link that keeps a list's
// filters, and the list page of the areas with a Find form (transfers, invoices, escrows, events).
import type { FastifyRequest } from 'fastify'
import { html, type Html } from '../../platform/html.ts'
import { isUuid } from './http.ts'
import { layout, type Chrome } from './layout.ts'

/** Every list shows this many, newest first; "Older" follows the cursor. */
export const LIST_PAGE = 25

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

/** The query of a list's next page: its filters that are set, then the cursor. */
function olderHref(path: string, filter: Record<string, string | undefined>, nextCursor: string): string {
  const kept = Object.entries(filter).filter((entry): entry is [string, string] => entry[1] !== undefined)
  return `${path}?${new URLSearchParams([...kept, ['cursor', nextCursor]]).toString()}`
}

/** The link to a list's next page with the same filters, or nothing on the last page. */
export function olderLink(
  path: string,
  filter: Record<string, string | undefined>,
  nextCursor: string | null,
  label: string,
): Html | '' {
  return nextCursor ? html`<p><a href="${olderHref(path, filter, nextCursor)}" id="older">${label}</a></p>` : ''
}

/** A status as people read it: `partially_paid` → "partially paid". */
export function statusLabel(status: string): string {
  return status.replaceAll('_', ' ')
}

/** A GET filter form's select: "Any" and the allowed values, the chosen one selected. */
export function filterSelect(
  label: string,
  name: string,
  allowed: readonly string[],
  chosen: string | undefined,
): Html {
  return html`<label>${label} <select name="${name}"><option value="">Any</option>${allowed.map(
    (value) => html`<option value="${value}"${value === chosen ? html` selected` : ''}>${statusLabel(value)}</option>`,
  )}</select></label>`
}

/** A list page with a Find form: its filters' fields, the rows (or why there are none), and the older link. */
export function findPage<T>(
  chrome: Chrome,
  page: {
    title: string
    path: string
    /** What stands above the form (a link to make one). */
    above?: Html
    fields: Html
    filter: Record<string, string | undefined>
    rows: readonly T[]
    row: (item: T) => Html
    /** The id of the list, when tests and links name it. */
    listId?: string
    empty: string
    nextCursor: string | null
    older: string
  },
): string {
  const { path, nextCursor } = page
  return layout(
    page.title,
    html`${page.above}<form method="get" action="${path}" class="filter">
${page.fields}
<button type="submit">Find</button></form>
${page.rows.length === 0 ? html`<p id="empty">${page.empty}</p>` : ''}
<ul class="list"${page.listId ? html` id="${page.listId}"` : ''}>${page.rows.map(page.row)}</ul>
${nextCursor ? html`<p><a href="${olderHref(path, page.filter, nextCursor)}">${page.older}</a></p>` : ''}`,
    chrome,
  )
}
