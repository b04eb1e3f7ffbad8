// What the collections pages share: their sub-navigation, and their list page: the status filter
// (or a line of its own), the list, and the "older" link that keeps the filter.
import { html, type Html } from '../../platform/html.ts'
import { layout, type Chrome } from './layout.ts'
import { filterSelect, olderLink } from './lists.ts'

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

/** A GET form filtering a collections list by status. */
export function statusFilter(path: string, allowed: readonly string[], status: string | undefined): Html {
  return html`<form method="get" action="${path}" class="filter">${filterSelect('Status', 'status', allowed, status)}<button type="submit">Filter</button></form>`
}

/** A collections list page: what stands above the list (its filter), the list, and the link to older ones with the same status. */
export function collectionsListPage(
  chrome: Chrome,
  page: {
    title: string
    path: string
    above: Html
    list: Html
    status?: string
    nextCursor: string | null
    older: string
  },
): string {
  return layout(
    page.title,
    html`${collectionsNav()}
${page.above}
${page.list}
${olderLink(page.path, { status: page.status }, page.nextCursor, page.older)}`,
    chrome,
  )
}
