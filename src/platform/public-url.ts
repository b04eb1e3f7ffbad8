// Where payers reach Rail's pages: the absolute URL of a hosted checkout page, from the PUBLIC_URL
// setting or, without it, the address the server listens on. One value per process, like the
// rest of the configuration: the JSON of an intent, an invoice or an escrow is built in places
// (events, error details) that are given no request, and every one of them must show the same URL.

let publicBaseUrl: string | undefined

/** Sets the base of page URLs (no trailing slash); the composition root calls it once the address is known. */
export function setPublicUrl(baseUrl: string): void {
  publicBaseUrl = baseUrl.replace(/\/+$/, '')
}

/** The page path of a checkout token: `/pay/` for an invoice, `/checkout/` for the rest (both paths serve every token). */
export function checkoutPath(token: string, kind: 'checkout' | 'pay' = 'checkout'): string {
  return `/${kind}/${encodeURIComponent(token)}`
}

/** The absolute URL of a checkout token's page. */
export function checkoutUrl(token: string, kind: 'checkout' | 'pay' = 'checkout'): string {
  return `${publicBaseUrl ?? 'http://127.0.0.1'}${checkoutPath(token, kind)}`
}

/** The origin (scheme, host, port) of PUBLIC_URL, or of the address the server listens on; undefined before either is known. */
export function publicOrigin(): string | undefined {
  return publicBaseUrl === undefined ? undefined : new URL(publicBaseUrl).origin
}

/** True when payers and partners reach Rail over https (PUBLIC_URL names an https address, e.g. behind a TLS-terminating proxy). */
export function publicUrlIsHttps(): boolean {
  return publicBaseUrl?.startsWith('https://') ?? false
}
