// The sandbox bank's background work: announcing inbound credits to the client that owns the
// virtual account, by a signed HTTP webhook — retried by graphile-worker (exponential backoff)
// until the client answers 2xx, as a bank's notification service would.
import type { Task } from 'graphile-worker'
import { signRequest } from '../client/signing.ts'
import { systemClock, unixSeconds, type Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import { clientWebhookPath, postToClient } from './client-webhooks.ts'
import { NOTIFY_TASK, SandboxBank, type InboundCreditNotice } from './service.ts'

/**
 * Announces an inbound credit to a client that speaks a provider dialect (sandbox-paystack,
 * sandbox-monnify), in that provider's format and signature; anything but 2xx throws (retried).
 */
export type CreditNotifier = (notice: InboundCreditNotice) => Promise<void>

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
  const timestampS = unixSeconds(deps.clock ?? systemClock)
  const signed = signRequest({
    keyId: 'sandbox-bank',
    signingSecret: deps.secret,
    method: 'POST',
    pathWithQuery: clientWebhookPath(client),
    body,
    timestampS,
  })
  const headers = {
    'X-Sandbox-Timestamp': signed['X-Rail-Timestamp']!,
    'X-Sandbox-Signature': signed['X-Rail-Signature']!,
  }
  await postToClient(deps.clientBaseUrl(), client, body, headers, 'the credit notice')
}
