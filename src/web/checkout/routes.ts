// The payer's pages: /checkout/{token} and /pay/{token} (the same page: every token is an
// intent's), a small JSON status of the token the page polls, the sandbox's simulated transfer
// (a plain form post), and the page's script and style sheet. No partner credentials: the token is
// the credential. Pages are never framed, cached or referred (the token is in their URL).
import { readFileSync } from 'node:fs'
import type { FastifyReply } from 'fastify'
import { registerPageArea, type HttpServer } from '../../platform/http.ts'
import { errorBody, RailError } from '../../platform/errors.ts'
import { pageHeaders as securityHeaders } from '../../platform/html.ts'
import { checkoutPage, notFoundPage, statusText } from './page.ts'
import { checkoutView, simulatePageTransfer, type CheckoutDeps } from './service.ts'

/** Only Rail's own files, no inline script or style, no framing, forms posted only to Rail. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

const ASSETS = {
  'checkout.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('./assets/checkout.js', import.meta.url)),
  },
  'checkout.css': {
    type: 'text/css; charset=utf-8',
    body: readFileSync(new URL('./assets/checkout.css', import.meta.url)),
  },
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return securityHeaders(reply, CONTENT_SECURITY_POLICY)
}

type TokenRequest = { Params: { token: string }; Querystring: { notice?: string } }

export function registerCheckoutRoutes(app: HttpServer, deps: CheckoutDeps): void {
  const open = { config: { auth: 'none' as const }, schema: { hide: true } }
  for (const prefix of ['/checkout', '/pay']) {
    // Whatever is wrong with a link (malformed, over-long, a path no page has) is a link not found.
    registerPageArea(app, {
      prefix: `${prefix}/`,
      except: /\/status$/,
      notFound: (reply) => pageHeaders(reply).code(404).type('text/html; charset=utf-8').send(notFoundPage()),
    })
    app.get<TokenRequest>(`${prefix}/:token`, open, async (request, reply) => {
      const view = await checkoutView(deps, request.params.token)
      const page = view
        ? checkoutPage(`${prefix}/${encodeURIComponent(request.params.token)}`, view, request.query.notice)
        : notFoundPage()
      return pageHeaders(reply)
        .code(view ? 200 : 404)
        .type('text/html; charset=utf-8')
        .send(page)
    })
    app.get<TokenRequest>(`${prefix}/:token/status`, open, async (request, reply) => {
      const view = await checkoutView(deps, request.params.token)
      if (!view)
        return pageHeaders(reply)
          .code(404)
          .send(errorBody(new RailError('not_found', 'Payment link not found')))
      const text = statusText(view)
      return pageHeaders(reply).send({
        state: view.state,
        label: text.label,
        detail: text.detail,
        paidKobo: view.paidKobo,
        remainingKobo: view.remainingKobo,
        returnUrl: view.returnUrl,
      })
    })
  }
  app.register(async (forms) => registerSimulateRoutes(forms as unknown as HttpServer, deps))
  app.get<{ Params: { file: string } }>('/checkout-assets/:file', open, async (request, reply) => {
    const asset = ASSETS[request.params.file as keyof typeof ASSETS]
    if (!asset) return pageHeaders(reply).code(404).type('text/html; charset=utf-8').send(notFoundPage())
    return reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', 'public, max-age=300')
      .type(asset.type)
      .send(asset.body)
  })
}

/** 1500, 1,500 or 1500.50 naira, in kobo; undefined when it is not an amount. */
export function parseNairaToKobo(text: string | undefined): number | undefined {
  const match = /^\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?\s*$/.exec(text ?? '')
  if (!match) return undefined
  const kobo = Number(match[1]!.replaceAll(',', '')) * 100 + Number((match[2] ?? '').padEnd(2, '0'))
  return Number.isSafeInteger(kobo) && kobo > 0 ? kobo : undefined
}

/** The sandbox's "Simulate a transfer" form: a urlencoded post, answered by a redirect back to the page. */
function registerSimulateRoutes(forms: HttpServer, deps: CheckoutDeps): void {
  forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  for (const prefix of ['/checkout', '/pay']) {
    forms.post<{ Params: { token: string }; Body: Record<string, string> | undefined }>(
      `${prefix}/:token/simulate`,
      { config: { auth: 'none' }, schema: { hide: true } },
      async (request, reply) => {
        const page = `${prefix}/${encodeURIComponent(request.params.token)}`
        const amountKobo = parseNairaToKobo(request.body?.amount)
        const attempt = request.body?.attempt ?? ''
        if (amountKobo === undefined || amountKobo > deps.maxAmountKobo || !/^[0-9a-f-]{36}$/.test(attempt))
          return pageHeaders(reply).redirect(`${page}?notice=amount`, 303)
        let outcome: Awaited<ReturnType<typeof simulatePageTransfer>>
        try {
          outcome = await simulatePageTransfer(deps, request.params.token, amountKobo, attempt)
        } catch (error) {
          if (!(error instanceof RailError)) throw error
          return pageHeaders(reply).redirect(`${page}?notice=${error.statusCode === 422 ? 'amount' : 'failed'}`, 303)
        }
        if (outcome !== 'paid')
          return pageHeaders(reply).code(404).type('text/html; charset=utf-8').send(notFoundPage())
        return pageHeaders(reply).redirect(`${page}?notice=sent`, 303)
      },
    )
  }
}
