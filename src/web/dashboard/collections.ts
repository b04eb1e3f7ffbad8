// The dashboard's collections (docs/dashboard.md): a summary of the partner's latest payment
// intents, virtual accounts, FBO accounts and inbound credits, each with its own list and object
// pages, and the triage of unmatched credits. Every read is the one the API's GET route makes.
import { html } from '../../platform/html.ts'
import { listCredits, type InboundCredit } from '../../collections/credits/service.ts'
import { listIntents, type IntentView } from '../../collections/intents/service.ts'
import { listAccounts, type VirtualAccount } from '../../collections/virtual-accounts/service.ts'
import { accountList, registerAccountPages } from './collections-accounts.ts'
import { creditList, registerCreditPages } from './collections-credits.ts'
import { intentList, registerIntentPages } from './collections-intents.ts'
import { COLLECTIONS_PATH, collectionsNav } from './collections-shared.ts'
import { headers, type DashboardRoutes } from './http.ts'
import { layout, type Chrome } from './layout.ts'
import { registerUnmatchedPages } from './unmatched.ts'

/** How many of each the summary shows. */
const LATEST = 5

export interface CollectionsSummary {
  intents: IntentView[]
  accounts: VirtualAccount[]
  fbo: VirtualAccount[]
  credits: InboundCredit[]
}

export function registerCollectionPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page(COLLECTIONS_PATH, async (_request, reply, visit) => {
    const partnerId = visit.partner.id
    const [intents, accounts, fbo, credits] = await Promise.all([
      listIntents(pool, { partnerId, limit: LATEST }),
      listAccounts(pool, { partnerId, purpose: 'persistent', limit: LATEST }),
      listAccounts(pool, { partnerId, purpose: 'fbo', limit: LATEST }),
      listCredits(pool, { partnerId, limit: LATEST }),
    ])
    const summary = {
      intents: intents.intents,
      accounts: accounts.accounts,
      fbo: fbo.accounts,
      credits: credits.credits,
    }
    return headers(reply).send(collectionsPage(visit.chrome, summary))
  })
  registerIntentPages(routes)
  registerAccountPages(routes)
  registerCreditPages(routes)
  registerUnmatchedPages(routes)
}

export function collectionsPage(chrome: Chrome, summary: CollectionsSummary): string {
  return layout(
    'Collections',
    html`${collectionsNav()}
<section aria-labelledby="latest-intents"><h2 id="latest-intents">Latest payment intents</h2>
${intentList(summary.intents, 'No payment intents yet.')}
<p><a href="${COLLECTIONS_PATH}/intents">All payment intents</a></p></section>
<section aria-labelledby="latest-accounts"><h2 id="latest-accounts">Latest virtual accounts</h2>
${accountList(summary.accounts, 'No persistent virtual accounts yet.')}
<p><a href="${COLLECTIONS_PATH}/virtual-accounts">All virtual accounts</a></p></section>
<section aria-labelledby="latest-fbo"><h2 id="latest-fbo">Latest FBO accounts</h2>
${accountList(summary.fbo, 'No FBO accounts yet.')}
<p><a href="${COLLECTIONS_PATH}/fbo">All FBO accounts</a></p></section>
<section aria-labelledby="latest-credits"><h2 id="latest-credits">Latest inbound credits</h2>
${creditList(summary.credits, 'No inbound credits yet.')}
<p><a href="${COLLECTIONS_PATH}/credits">All inbound credits</a> · <a href="/dashboard/unmatched">Unmatched credits</a></p></section>`,
    chrome,
  )
}
