// The OpenAPI documents, built by @fastify/swagger from each route's schema: the partner reference
// (/openapi.json, shown at /docs) and the sandbox bank's own API with the provider notice route
// (/sandbox-bank/openapi.json), which partners never call. How a route describes itself is in
// docs/api.md ("The OpenAPI document"); openapi-document.ts finishes what the routes give.
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyRequest } from 'fastify'
import { amountMaximumOf } from './amounts.ts'
import type { HttpServer } from './http.ts'
import { takesIdempotencyKey, type IdempotencyKeyMode } from './idempotency-keys.ts'
import { finishDocument, type DocumentKind, type OpenApiDocument } from './openapi-document.ts'
import { ROUTE_FACTS_KEYWORD, type RouteFacts } from './openapi-errors.ts'
import { signTryItRequest } from './openapi-try-it.ts'
import { DOCUMENTED_BODY_KEYWORD, ErrorBodySchema } from './schemas.ts'

export const PARTNER_DOCUMENT_PATH = '/openapi.json'
export const BANK_DOCUMENT_PATH = '/sandbox-bank/openapi.json'

/** Routes that belong to the bank's document, not the partner's: the sandbox bank and providers' notices to Rail. */
const BANK_PATH_PREFIXES = ['/sandbox-bank/', '/providers/']

const SIGNATURE_SCHEMES = { railKeyId: [], railTimestamp: [], railSignature: [] }

const SIGNED_REQUESTS = [
  'Partner and wallet routes are signed with HMAC-SHA256: three headers, all required together.',
  'The canonical string is four lines joined by a line feed (no trailing newline): the X-Rail-Timestamp value,',
  'the method in upper case, the path with its query exactly as sent (e.g. `/wallet/customer?customerId=abc`),',
  'and the lowercase hex SHA-256 of the raw body bytes (of the empty string when there is no body).',
  'X-Rail-Signature is `v1=` followed by the lowercase hex HMAC-SHA256 of that string, keyed with the UTF-8 bytes of the signing secret.',
  'The timestamp must be within ±300 s of the server clock. A missing, stale or wrong signature is 401 `unauthorized` and changes nothing.',
  'Worked example (docs/authentication.md): secret `rk_sec_test_example`, timestamp `1700000000`, `POST /wallet/credit?x=1` with body `{"a":1}`',
  'signs as `v1=370535b6f1a2dd61c80421d8185a81d81a7e0ad42b873024a5df7ab103af03f7`.',
  'In /docs, "Try it out" signs for you: Authorize with your key id in railKeyId, your signing secret in railSignature and any value in railTimestamp; the page computes each signature in the browser and never sends the secret.',
].join(' ')

const PARTNER_SECURITY_SCHEMES = {
  railKeyId: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Rail-Key-Id',
    description: `The key id issued with the partner's credentials (\`rk_kid_test_…\` or \`rk_kid_live_…\`). ${SIGNED_REQUESTS}`,
  },
  railTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Rail-Timestamp',
    description:
      'The time of signing in unix seconds; accepted within ±300 s. It is the first line of the signed string (see railKeyId).',
  },
  railSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Rail-Signature',
    description:
      '`v1=` + lowercase hex HMAC-SHA256 of the canonical string (timestamp, method, path with query, SHA-256 of the body), keyed with the signing secret (see railKeyId).',
  },
  escrowApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'The escrow API key (`rk_test_…` in the sandbox, `rk_live_…` in live), shown once at creation or rotation; only the escrow routes (`/api/v1/escrow/partner/…`) take it. A missing or unknown key is 401.',
  },
} as const

const BANK_SECURITY_SCHEMES = {
  sandboxTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Sandbox-Timestamp',
    description: "Unix seconds, within ±300 s: the first line of the signed string, as in Rail's own signed requests.",
  },
  sandboxSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Sandbox-Signature',
    description:
      "`v1=` + hex HMAC-SHA256, keyed with the bank's shared secret, of the timestamp, method, path with query and SHA-256 of the body, each on its own line: Rail's request signature under the bank's header names. The bank signs its inbound-credit notices to Rail the same way.",
  },
} as const

const PARTNER_TAGS = [
  { name: 'partner', description: 'The calling partner and its settings: the default callback URL.' },
  {
    name: 'events',
    description:
      "Everything that happened to the partner's objects, and its delivery to callback URLs (the payloads are under `webhooks`).",
  },
  { name: 'banks', description: 'The banks Rail pays, and the name on an account before paying it.' },
  {
    name: 'outbound',
    description:
      'Payouts from the float to an account at any bank, asynchronous (202), with their state at the bank; the float itself.',
  },
  { name: 'counterparties', description: 'Saved beneficiaries, made on the first payout to an account.' },
  {
    name: 'collections',
    description:
      'Money in: persistent and FBO virtual accounts, payment intents, credits and their BRRs, and unmatched credits.',
  },
  {
    name: 'invoices',
    description: 'Invoices paid into their own virtual account: draft, published, partially paid, paid, cancelled.',
  },
  {
    name: 'refunds',
    description: 'Refunds of confirmed credits to the account the money came from, paid as outbound transfers.',
  },
  {
    name: 'wallets',
    description: 'Customer wallets at a provider: create, balances, credits, debits, moves and payouts.',
  },
  { name: 'statements', description: 'Balances and statements with running balances, as JSON or CSV.' },
  {
    name: 'settlement',
    description: 'How collections settle: to the float after each credit, or daily to a bank account.',
  },
  {
    name: 'escrow',
    description: 'The escrow API (`X-API-Key`): money held for a recipient until released, cancelled or expired.',
  },
  {
    name: 'sandbox',
    description:
      'Sandbox partners only (404 for live partners): fund the float, simulate credits and settlements, move the test clock.',
  },
]

const BANK_TAGS = [
  {
    name: 'sandbox bank',
    description:
      "The sandbox bank's API, as Rail's sandbox provider calls it: accounts, name enquiry, transfers and requery, virtual accounts, inbound credits, faults.",
  },
  {
    name: 'providers',
    description: "Notices a provider sends to Rail (an inbound credit), signed with the provider's own scheme.",
  },
]

function openapiOptions(kind: DocumentKind): FastifyDynamicSwaggerOptions['openapi'] {
  const partner = kind === 'partner'
  return {
    openapi: '3.1.0',
    info: partner
      ? {
          title: 'Rail API',
          version: '1.0.0',
          description:
            'Wallets, collections, payouts, invoices and escrow for Nigerian partners. Amounts are integer kobo (₦1 = 100 kobo). Every create and move is idempotent on its reference: the same body again answers the stored result with `Idempotent-Replayed: true`; another body, 409 `idempotency_conflict`. Errors have one body, `ErrorBody`, whose `error` is a stable code (docs/errors.md). Callbacks are listed under `webhooks`.',
          license: { name: 'UNLICENSED: proprietary, all rights reserved', identifier: 'LicenseRef-Proprietary' },
        }
      : {
          title: 'Rail sandbox bank',
          version: '1.0.0',
          description:
            "The sandbox bank: a NIP-connected bank simulated in Rail's repository, with the API Rail's sandbox provider calls, and the route through which a provider announces inbound credits to Rail. Not part of the partner API.",
          license: { name: 'UNLICENSED: proprietary, all rights reserved', identifier: 'LicenseRef-Proprietary' },
        },
    servers: [
      {
        url: 'http://127.0.0.1:8080',
        description: 'npm start (replaced by the address of the server that serves the document)',
      },
    ],
    tags: partner ? PARTNER_TAGS : BANK_TAGS,
    components: { securitySchemes: partner ? PARTNER_SECURITY_SCHEMES : BANK_SECURITY_SCHEMES },
  }
}

/** Each document keeps its own routes, and says how each is authenticated. */
function transformFor(kind: DocumentKind): NonNullable<FastifyDynamicSwaggerOptions['transform']> {
  return ({ schema, url, route }) => {
    const inBankDocument = BANK_PATH_PREFIXES.some((prefix) => url.startsWith(prefix))
    if (inBankDocument !== (kind === 'bank')) return { schema: { ...schema, hide: true }, url }
    // A body the route reads itself is shown as documented; its validation stays the route's.
    const { [DOCUMENTED_BODY_KEYWORD]: documentedBody, ...routeSchema } = (schema ?? {}) as Record<string, unknown>
    const shown = (documentedBody ? { ...routeSchema, body: documentedBody } : schema) as typeof schema
    const config = route.config as
      { auth?: string; rateLimited?: boolean; idempotencyKey?: IdempotencyKeyMode } | undefined
    const auth = config?.auth
    const security =
      kind === 'bank'
        ? [{ sandboxTimestamp: [], sandboxSignature: [] }]
        : auth === 'signature'
          ? [SIGNATURE_SCHEMES]
          : auth === 'api-key'
            ? [{ escrowApiKey: [] }]
            : undefined
    // The bank's routes and the providers' notices check their own signature, without Rail's shared input rules.
    const facts: RouteFacts = {
      authenticated: security !== undefined,
      sharedInputRules: kind === 'partner' && security !== undefined,
      rateLimited: config?.rateLimited !== false,
    }
    // Every state-changing partner route takes the Idempotency-Key header (idempotency-keys.ts).
    if (kind === 'partner' && security !== undefined && takesIdempotencyKey(route.method))
      facts.idempotencyKey = config?.idempotencyKey ?? 'claimed-before'
    return {
      schema: shown ? { ...shown, ...(security ? { security } : {}), [ROUTE_FACTS_KEYWORD]: facts } : shown,
      url,
    }
  }
}

function swaggerOptions(kind: DocumentKind, app: HttpServer): FastifyDynamicSwaggerOptions {
  return {
    openapi: openapiOptions(kind),
    transform: transformFor(kind),
    // Built on first request, once installAmountLimit has recorded the configured maximum.
    transformObject: (documentObject) =>
      finishDocument((documentObject as { openapiObject: unknown }).openapiObject as OpenApiDocument, kind, {
        maxAmountKobo: amountMaximumOf(app),
      }) as never,
    // Shared schemas keep their $id as their name under components.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    ...(kind === 'bank' ? { decorator: 'bankSwagger' } : {}),
  }
}

/**
 * The document as served: its server is PUBLIC_URL when it is set (partners reach Rail there),
 * else the address it was asked at. A Host header is the caller's to write: with PUBLIC_URL set it
 * never names the server, so a link to /docs cannot point "Try it out" (and a signing secret's
 * signatures) at another host.
 */
function servedFrom(document: unknown, request: FastifyRequest, publicUrl: string | undefined): unknown {
  const url = publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`
  return { ...(document as object), servers: [{ url, description: 'This Rail server' }] }
}

/**
 * /docs is where partners type their signing secret: it runs only its own scripts (Swagger UI's
 * files and the initializer that signs "Try it out", none inline, none from a string), talks only to
 * itself and the server the document names, and is never framed (no clickjacking of the Authorize
 * form).
 */
/**
 * The one inline style Swagger UI writes into the page as it starts, allowed by its
 * hash rather than by 'unsafe-inline': injected CSS can read a page's inputs. A Swagger UI that
 * writes another is caught by the browser test of /docs (test/platform/openapi-docs.test.ts).
 */
const SWAGGER_UI_INLINE_STYLE_HASH = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"

function docsContentSecurityPolicy(publicUrl: string | undefined): string {
  const connect = publicUrl ? `'self' ${new URL(publicUrl).origin}` : "'self'"
  return [
    "default-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    `style-src 'self' ${SWAGGER_UI_INLINE_STYLE_HASH}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src ${connect}`,
    "form-action 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

export async function registerOpenApi(app: HttpServer, publicUrl?: string): Promise<void> {
  app.addSchema(ErrorBodySchema)
  await app.register(swagger, swaggerOptions('partner', app))
  await app.register(swagger, swaggerOptions('bank', app))
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // "Try it out" signs in the browser (openapi-try-it.ts); Swagger UI writes the function's source
    // into the page. No validator: it would send the document's address to a third party.
    uiConfig: { requestInterceptor: signTryItRequest as never, persistAuthorization: false, validatorUrl: null },
    staticCSP: docsContentSecurityPolicy(publicUrl),
    uiHooks: {
      onRequest: (_request, reply, done) => {
        void reply
          .header('X-Frame-Options', 'DENY')
          .header('X-Content-Type-Options', 'nosniff')
          .header('Referrer-Policy', 'no-referrer')
        done()
      },
    },
    transformSpecification: (document, request) => servedFrom(document, request, publicUrl) as Record<string, unknown>,
  })
  const hidden = { config: { auth: 'none' as const }, schema: { hide: true } }
  app.get(PARTNER_DOCUMENT_PATH, hidden, async (request) => servedFrom(app.swagger(), request, publicUrl))
  app.get(BANK_DOCUMENT_PATH, hidden, async (request) =>
    servedFrom((app as unknown as { bankSwagger(): unknown }).bankSwagger(), request, publicUrl),
  )
}
