// Background work of events: delivery attempts, and the sweep that revives deliveries whose job
// was lost with a killed worker or whose claim lapsed.
import type { Task } from 'graphile-worker'
import { Deliverer, type DeliveryDeps } from './delivery.ts'
import { selectStalledDeliveries } from './deliveries-repo.ts'
import { DELIVER_TASK, enqueueDelivery } from './service.ts'

export const DELIVERY_SWEEP_TASK = 'event_delivery_sweep'
/** Every minute; a delivery is revived once it is this late and unclaimed. */
export const EVENTS_CRONTAB = `* * * * * ${DELIVERY_SWEEP_TASK}`
const STALLED_GRACE_MS = 10_000
const SWEEP_BATCH = 1_000

export function eventTasks(deps: DeliveryDeps): Record<string, Task> {
  const deliverer = new Deliverer(deps)
  return {
    [DELIVER_TASK]: async (payload) => {
      const { deliveryId, url } = payload as { deliveryId: string; url?: string }
      await deliverer.attempt(deliveryId, url)
    },
    [DELIVERY_SWEEP_TASK]: async (_payload, helpers) => {
      const stalled = await selectStalledDeliveries(deps.pool, STALLED_GRACE_MS, SWEEP_BATCH, deps.clock.now())
      for (const delivery of stalled) await enqueueDelivery(deps.pool, delivery.id, delivery.url)
      if (stalled.length > 0) helpers.logger.info(`revived ${stalled.length} stalled event deliveries`)
    },
  }
}
