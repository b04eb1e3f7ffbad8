// Asking an intent's owner (an invoice, an escrow) what a credit to its intent means. The credit's
// money has just reached the partner's collections account; the owner answers how much it takes
// (matching.ts decideOwned reads the answer). Applying a credit and triage's assignment ask alike.
import type { PaymentIntent } from '../intents/service.ts'
import type { Tx } from '../../platform/db.ts'
import type { InboundDeps } from './deps.ts'
import type { OwnerAnswer } from './matching.ts'
import type { InboundCredit } from './repo.ts'

export async function askOwner(
  deps: Pick<InboundDeps, 'owners' | 'clock'>,
  tx: Tx,
  credit: Pick<InboundCredit, 'id' | 'amountKobo' | 'currency'>,
  intent: PaymentIntent,
  partner: { partnerId: string; collectionsAccountId: string },
): Promise<OwnerAnswer> {
  const handler = intent.ownerType ? deps.owners[intent.ownerType] : undefined
  if (!handler) throw new Error(`no credit handler for ${intent.ownerType} owners`)
  return handler(
    tx,
    {
      ...partner,
      creditId: credit.id,
      ownerId: intent.ownerId!,
      intentId: intent.id,
      amountKobo: credit.amountKobo,
      currency: credit.currency,
    },
    deps.clock,
  )
}
