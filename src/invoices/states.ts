// Statuses of an invoice and the moves between them (docs/states.md). Repos guard each change with
// `WHERE status = ANY(invoiceStates.from(next))`, so a late or concurrent change finds the row
// already moved and changes nothing; the database refuses any other change (migration 0036).
import { defineMachine } from '../platform/state-machine.ts'

export type InvoiceStatus = 'draft' | 'published' | 'partially_paid' | 'paid' | 'cancelled'

export const invoiceStates = defineMachine<InvoiceStatus>({
  name: 'invoice',
  table: 'invoices',
  column: 'status',
  next: {
    draft: ['published', 'cancelled'], // publishing composes its payment intent
    published: ['partially_paid', 'paid', 'cancelled'], // credits to its intent, or the partner cancels
    partially_paid: ['paid', 'cancelled'], // more credits (staying partially paid is no change)
    paid: [], // what is owed was paid; a credit past it is the intent's to handle
    cancelled: [], // its intent's account takes no more credits for it
  },
})
