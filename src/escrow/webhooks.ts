// The partner's escrow webhook: its URL and the secret that signs its events.
import { assertCallbackUrlAllowed } from '../events/service.ts'
import { classifyAddress } from '../platform/address-guard.ts'
import type { Partner } from '../partners/service.ts'
import { seal } from '../platform/crypto.ts'
import { fieldError } from '../platform/errors.ts'
import * as repo from './repo.ts'
import { webhookSecretBinding } from './events.ts'
import type { EscrowDeps } from './types.ts'

export interface WebhookRequest {
  webhookUrl: string
  /** Omitted: the registered secret stays; null: it is removed. */
  webhookSecret?: string | null
}

/**
 * The one rule for an escrow webhook URL, registered or an escrow's own: https; a sandbox partner
 * may use http to a loopback receiver when loopback callbacks are allowed (local development).
 * The SSRF guard of Events applies as to every callback URL.
 */
export async function assertEscrowWebhookUrl(
  deps: Pick<EscrowDeps, 'allowLoopbackCallbacks'>,
  partner: Pick<Partner, 'environment'>,
  webhookUrl: string,
): Promise<void> {
  const url = new URL(webhookUrl)
  const localReceiver = partner.environment === 'sandbox' && deps.allowLoopbackCallbacks && isLoopbackHost(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && localReceiver))
    throw fieldError('webhookUrl', 'must be an https URL')
  await assertCallbackUrlAllowed(webhookUrl, partner.environment, deps.allowLoopbackCallbacks, 'webhookUrl')
}

/** Registers or updates the partner's escrow webhook (its URL as assertEscrowWebhookUrl allows). */
export async function registerWebhook(deps: EscrowDeps, partner: Partner, request: WebhookRequest) {
  await assertEscrowWebhookUrl(deps, partner, request.webhookUrl)
  const sealed =
    request.webhookSecret === undefined
      ? undefined
      : request.webhookSecret === null
        ? null
        : seal(deps.masterKey, request.webhookSecret, webhookSecretBinding(partner.id))
  const webhook = await repo.upsertWebhook(deps.pool, partner.id, request.webhookUrl, sealed)
  const hasSecret = webhook.secretSealed !== null
  return {
    success: true,
    webhookUrl: webhook.url,
    hasSecret,
    message: hasSecret
      ? 'Webhook registered; events are signed in X-Rail-Signature with your webhookSecret'
      : 'Webhook registered without a secret; events are not signed (registering a webhookSecret is strongly recommended)',
  }
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || classifyAddress(host) === 'loopback'
}
