// How the sandbox bank and its dialects tell their client (Rail, on whose server they are mounted)
// of something, as a bank's notification service would: a POST of the notice to the client's
// webhook route for the provider profile, signed as that provider signs; anything but 2xx throws,
// so that the job that sent it is tried again (graphile-worker's backoff).
import { request as httpRequest } from 'undici'

const WEBHOOK_TIMEOUT_MS = 10_000
/** How often a notice is tried: graphile-worker backs off exponentially between attempts, and 25 span about three days. */
export const NOTICE_ATTEMPTS_MAX = 25

/** The client's webhook route for a provider profile: POST /providers/{profile}/webhooks. */
export function clientWebhookPath(profile: string): string {
  return `/providers/${encodeURIComponent(profile)}/webhooks`
}

/** POSTs `body` (JSON) to the client's webhook route for `profile` with the provider's signature headers; throws unless 2xx. */
export async function postToClient(
  clientBaseUrl: string,
  profile: string,
  body: string,
  signatureHeaders: Record<string, string>,
  what: string,
): Promise<void> {
  const response = await httpRequest(`${clientBaseUrl}${clientWebhookPath(profile)}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...signatureHeaders },
    body,
    headersTimeout: WEBHOOK_TIMEOUT_MS,
    bodyTimeout: WEBHOOK_TIMEOUT_MS,
  })
  await response.body.dump()
  if (response.statusCode < 200 || response.statusCode >= 300)
    throw new Error(`the client answered ${response.statusCode} to ${what}`)
}
