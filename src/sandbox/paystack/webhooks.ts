// The sandbox Paystack dialect's webhooks to Rail: charge.success for a credit paid into a
// dedicated account, transfer.success / transfer.failed once a payout made through the dialect
// settles, transfer.reversed once the simulator reverses it. Each is POSTed as {event, data} to
// Rail's /providers/sandbox-paystack/webhooks with x-paystack-signature (HMAC-SHA512 of the raw
// body, keyed with the secret key), by a graphile-worker job retried until Rail answers 2xx.
import type { Task } from 'graphile-worker'
import type { Queryable } from '../../platform/db.ts'
import { addJob } from '../../platform/jobs.ts'
import { NOTICE_ATTEMPTS_MAX, postToClient } from '../client-webhooks.ts'
import { sandboxPaystackSecretKey } from '../dialect-credentials.ts'
import { SANDBOX_PAYSTACK_PROFILE, type SandboxDialectJobDeps } from '../dialects.ts'
import type { CreditNotifier } from '../jobs.ts'
import { SandboxBank } from '../service.ts'
import type { PayoutListener } from '../transfers.ts'
import type { InboundCreditNotice } from '../types.ts'
import { creditTransactionJson, transferJson, transferStatus } from './shapes.ts'
import { dedicatedAccountByNumber, transferByReference } from './store.ts'
import { paystackSignature } from './wire.ts'

/** The job that tells Rail of a change to a transfer made through the dialect. */
export const TRANSFER_EVENT_TASK = 'sandbox_paystack_transfer_event'

/** What a transfer job announces: the payout's outcome once it settles, or its reversal. */
export type TransferChange = 'settled' | 'reversed'

/** Queues the announcement of a transfer's change, on the caller's transaction (it exists only if the change does). */
export async function queueTransferEvent(tx: Queryable, reference: string, change: TransferChange): Promise<void> {
  await addJob(tx, TRANSFER_EVENT_TASK, { reference, change }, { maxAttempts: NOTICE_ATTEMPTS_MAX })
}

/**
 * The dialect's interest in the bank's payouts: a change to a payout made through it (an outcome
 * registered, a reversal) queues its webhook in the statement that makes the change. Payouts made
 * otherwise (the sandbox provider's) are not the dialect's.
 */
export const PAYOUT_LISTENER: PayoutListener = {
  payoutsTable: 'sandbox_bank.paystack_transfers',
  task: TRANSFER_EVENT_TASK,
  maxAttempts: NOTICE_ATTEMPTS_MAX,
}

export function transferEventTasks(deps: SandboxDialectJobDeps): Record<string, Task> {
  const bank = new SandboxBank(deps.pool, deps.bankCode, deps.clock)
  const secretKey = sandboxPaystackSecretKey(deps.bankSecret)
  return {
    [TRANSFER_EVENT_TASK]: async (payload) => {
      const { reference, change } = payload as { reference: string; change: TransferChange }
      // Asking the bank settles a payout whose registered outcome is due, as a requery would.
      await bank.requery(reference)
      const transfer = await transferByReference(deps.pool, reference)
      if (!transfer) return
      if (change === 'reversed') return post(deps, secretKey, 'transfer.reversed', transferJson(transfer, 'reversed'))
      // The outcome as it settled, even if the payout was reversed since (that has its own event).
      const settled = transferStatus({ responseCode: transfer.responseCode, reversedAt: null })
      // Registered but not yet due by the bank's clock: tried again later.
      if (settled === 'pending') throw new Error(`transfer ${reference} has not settled yet`)
      await post(
        deps,
        secretKey,
        settled === 'success' ? 'transfer.success' : 'transfer.failed',
        transferJson(transfer, settled),
      )
    },
  }
}

/**
 * charge.success for a credit paid into a dedicated account (the sandbox bank's notice job calls
 * it for accounts whose client is sandbox-paystack); throws on anything but 2xx, so the job retries.
 */
export function creditNotifier(deps: SandboxDialectJobDeps): CreditNotifier {
  const secretKey = sandboxPaystackSecretKey(deps.bankSecret)
  return async (notice: InboundCreditNotice) => {
    const account = await dedicatedAccountByNumber(deps.pool, notice.accountNumber)
    if (!account)
      throw new Error(`account ${notice.accountNumber} is no dedicated account of the sandbox Paystack dialect`)
    await post(deps, secretKey, 'charge.success', creditTransactionJson(notice, account))
  }
}

/** POSTs {event, data} to Rail's webhook route for the profile, signed; anything but 2xx throws. */
async function post(
  deps: { clientBaseUrl: () => string },
  secretKey: string,
  event: string,
  data: unknown,
): Promise<void> {
  const body = JSON.stringify({ event, data })
  await postToClient(
    deps.clientBaseUrl(),
    SANDBOX_PAYSTACK_PROFILE,
    body,
    { 'x-paystack-signature': paystackSignature(secretKey, body) },
    `the ${event} webhook`,
  )
}
