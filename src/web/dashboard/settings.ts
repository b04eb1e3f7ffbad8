// The dashboard's settings pages (docs/dashboard.md): the partner's default callback URL, set
// through setPartnerCallbackUrl as PATCH /api/v1/rail/settings sets it (the same URL rules and
// SSRF guard, loopback only when the server allows it), and credential rotation (settings-rotate.ts).
import { RailError } from '../../platform/errors.ts'
import { callbackUrlDisabled, setPartnerCallbackUrl } from '../../events/service.ts'
import { listLiveCredentials } from '../../partners/service.ts'
import { runRecorded } from './actions.ts'
import { headers, isUuid, refusedAction, type DashboardRoutes, type FormBody, type Visit } from './http.ts'
import { noticeOf, plainPage } from './layout.ts'
import { newSecretPage, OVERLAP_HOURS, ROTATABLE, settingsPage } from './settings-page.ts'
import { rotateFromDashboard } from './settings-rotate.ts'

const CALLBACK_URL_MAX = 2048
/** Control characters and whitespace have no place in a URL; the API's schema refuses them too. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NOT_IN_URL = /[\u0000-\u0020\u007f-\u009f\s]/u

const NOTICES: Record<string, string> = {
  'callback-url-saved': 'Callback URL saved.',
  'callback-url-removed': 'Callback URL removed: new events are recorded but not delivered until you set one.',
}

/** The URL from the form, null to remove it, or why it is refused (nothing changed then). */
export function callbackUrlOf(body: FormBody): { url: string | null } | { refused: string; status: number } {
  if (body.remove === '1') return { url: null }
  const url = body.callbackUrl
  if (typeof url !== 'string' || url.length === 0)
    return { refused: 'Enter a callback URL (or remove it with Remove callback URL).', status: 400 }
  if (url.length > CALLBACK_URL_MAX)
    return { refused: `A callback URL has at most ${CALLBACK_URL_MAX} characters.`, status: 400 }
  if (NOT_IN_URL.test(url)) return { refused: 'A callback URL has no spaces or control characters.', status: 400 }
  if (!/^https?:\/\//.test(url) || !URL.canParse(url))
    return { refused: 'callbackUrl: must be an http:// or https:// URL', status: 422 }
  return { url }
}

export function registerSettingsPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page('/dashboard/settings', async (request, reply, visit) => {
    const partner = visit.partner
    const [disabled, credentials] = await Promise.all([
      partner.callbackUrl === null ? undefined : callbackUrlDisabled(pool, partner.id, partner.callbackUrl),
      listLiveCredentials(pool, partner.id),
    ])
    const notice = noticeOf(NOTICES, request)
    return headers(reply).send(settingsPage(visit.chrome, { partner, disabled, credentials }, notice))
  })
  routes.form('/dashboard/settings/callback-url', async (_request, reply, visit, body) => {
    const input = callbackUrlOf(body)
    if ('refused' in input) return headers(reply).code(input.status).send(plainPage('Not saved', input.refused))
    const refusal = await saveCallbackUrl(routes, visit, input.url)
    if (refusal) return refusedAction(reply, 'Not saved', refusal)
    return headers(reply).redirect(
      `/dashboard/settings?notice=${input.url === null ? 'callback-url-removed' : 'callback-url-saved'}`,
      303,
    )
  })
  routes.form('/dashboard/settings/rotate', async (_request, reply, visit, body) => {
    const rotatable = Object.hasOwn(ROTATABLE, body.credential ?? '') ? ROTATABLE[body.credential!]! : undefined
    const overlapHours = OVERLAP_HOURS.find((hours) => hours === body.overlapHours)
    if (!rotatable || !overlapHours || !isUuid(body.reference)) {
      return headers(reply)
        .code(400)
        .send(
          plainPage(
            'Not rotated',
            'The form was incomplete or changed: reload the settings page and try again. Nothing was rotated.',
          ),
        )
    }
    const result = await rotateFromDashboard(
      routes.deps,
      visit,
      rotatable.kind,
      Number(overlapHours) * 3600,
      body.reference,
    )
    if (result.ok) return headers(reply).send(newSecretPage(visit.chrome, { noun: rotatable.noun, ...result.issued }))
    if (!result.seen) return refusedAction(reply, 'Not rotated', result.error)
    return headers(reply)
      .code(409)
      .send(
        plainPage(
          'Already rotated',
          'This form was already used: that rotation was made, and its new secret was shown once and is not shown again. If you did not copy it, rotate again from the settings page.',
        ),
      )
  })
}

/** Sets (or removes) the default callback URL through the API's service function; a refusal is answered, not thrown. */
async function saveCallbackUrl(
  routes: DashboardRoutes,
  visit: Visit,
  url: string | null,
): Promise<RailError | undefined> {
  const { pool, allowLoopbackCallbacks } = routes.deps
  const action = { name: 'settings.callback_url', objectId: visit.partner.id, detail: { callbackUrl: url } }
  try {
    await runRecorded(
      routes.deps,
      visit,
      action,
      () => setPartnerCallbackUrl(pool, visit.partner, url, allowLoopbackCallbacks),
      () => ({}),
    )
    return undefined
  } catch (error) {
    if (!(error instanceof RailError) || error.statusCode >= 500) throw error
    return error
  }
}
