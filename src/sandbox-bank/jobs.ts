// The sandbox bank's background work: announcing inbound credits to the client that owns the
// virtual account, by a signed HTTP webhook — retried by graphile-worker (exponential backoff)
// until the client answers 2xx, as a bank's notification service would.
import type { Task } from 'graphile-worker'
import { request as httpRequest } from 'undici'
import { signRequest } from '../client/signing.ts'
import { systemClock, unixSeconds, type Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import { NOTIFY_TASK, SandboxBank, type InboundCreditNotice } from './service.ts'

/**
 * Announces an inbound credit to a client that speaks a provider dialect (sandbox-paystack,
 * sandbox-monnify), in that provider's format and signature; anything but 2xx throws (retried).
 */
export type CreditNotifier = (notice: InboundCreditNotice) => Promise<void>

const NOTIFY_TIMEOUT_MS = 10_000

export interface SandboxBankJobDeps {
  pool: Pool
  /** The secret the bank shares with its clients; it signs the webhook. */
  secret: string
  /** Where the bank's clients listen: Rail's base URL (the bank is mounted on Rail's server). */
  clientBaseUrl: () => string
  bankCode?: string
  /** The time notices are signed at: the time the bank shares with its clients (the system clock unless told). */
  clock?: Clock
  /** The dialects' notifiers, by client: a credit to an account one of them allocated is announced its way. */
  dialectNotifiers?: Record<string, CreditNotifier>
}

export function sandboxBankTasks(deps: SandboxBankJobDeps): Record<string, Task> {
  const bank = new SandboxBank(deps.pool, deps.bankCode, deps.clock)
  return {
    [NOTIFY_TASK]: async (payload) => {
      const { sessionId } = payload as { sessionId: string }
      const found = await bank.inboundNotice(sessionId)
      if (!found) return
      const dialect = deps.dialectNotifiers?.[found.client]
      if (dialect) await dialect(found.notice)
      else await postNotice(deps, found.client, JSON.stringify(found.notice))
      await bank.markNotified(sessionId)
    },
  }
}

/** POSTs the notice to the client's webhook; anything but 2xx throws, so the job is retried. */
async function postNotice(deps: SandboxBankJobDeps, client: string, body: string): Promise<void> {
  const path = `/providers/${encodeURIComponent(client)}/webhooks`
  const timestampS = unixSeconds(deps.clock ?? systemClock)
  const signed = signRequest({ keyId: 'sandbox-bank', signingSecret: deps.secret, method: 'POST', pathWithQuery: path, body, timestampS })
  const response = await httpRequest(`${deps.clientBaseUrl()}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Sandbox-Timestamp': signed['X-Rail-Timestamp']!, 'X-Sandbox-Signature': signed['X-Rail-Signature']! },
    body,
    headersTimeout: NOTIFY_TIMEOUT_MS,
    bodyTimeout: NOTIFY_TIMEOUT_MS,
  })
  await response.body.dump()
  if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`the client answered ${response.statusCode} to the credit notice`)
}
