// The state machines of event delivery (docs/webhooks.md, docs/states.md): each delivery of an event
// to a URL, and the event's delivery status (its latest delivery's end). Repos guard each change
// with `WHERE status = ANY(deliveryStates.from(next))`; the database refuses any other change
// (migration 0036).
import { defineMachine } from '../platform/state-machine.ts'

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'
export type EventDeliveryStatus = DeliveryStatus | 'skipped'

export const deliveryStates = defineMachine<DeliveryStatus>({
  name: 'event_delivery',
  table: 'event_deliveries',
  column: 'status',
  next: {
    pending: ['delivered', 'failed'], // a 2xx, or the retry schedule ran out (or the URL answered 410)
    delivered: [], // a redelivery is a new delivery
    failed: [],
  },
})

export const eventDeliveryStates = defineMachine<EventDeliveryStatus>({
  name: 'event',
  table: 'events',
  column: 'delivery_status',
  next: {
    pending: ['delivered', 'failed'], // its delivery ended
    delivered: ['pending'], // the partner asked for a redelivery
    failed: ['pending'],
    skipped: ['pending'], // no URL when it happened; a redelivery to the partner's URL since
  },
})
