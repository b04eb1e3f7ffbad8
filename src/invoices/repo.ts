// SQL of invoices. Changes of status are checked in SQL (`WHERE status = ANY(allowed)`), so a
// late or concurrent change finds the row already moved and changes nothing.
import { camelColumns, rowReaders, type Queryable } from '../platform/db.ts'
import { invoiceStates, type InvoiceStatus } from './states.ts'

export type { InvoiceStatus } from './states.ts'

export interface Customer {
  name?: string
  email?: string
  phone?: string
  customerId?: string
}

/** One billed line: what, how many, at how much each (kobo). */
export interface LineItem {
  description: string
  quantity: number
  unitAmountKobo: number
}

export interface Invoice {
  id: string
  partnerId: string
  reference: string
  requestHash: string
  status: InvoiceStatus
  title: string
  description: string | null
  lineItems: LineItem[]
  amountKobo: number
  amountPaidKobo: number
  currency: string
  customer: Customer | null
  dueAt: Date | null
  callbackUrl: string | null
  paymentIntentId: string | null
  creatorMetadata: Record<string, unknown>
  createdAt: Date
  statusChangedAt: Date
  publishedAt: Date | null
  paidAt: Date | null
  cancelledAt: Date | null
}

const COLUMNS =
  camelColumns(`id, partner_id, reference, request_hash, status, title, description, line_items, amount_kobo, amount_paid_kobo, currency, customer, due_at, callback_url,
  payment_intent_id, creator_metadata, created_at, status_changed_at, published_at, paid_at, cancelled_at`)

const { one, all } = rowReaders((row: Invoice) => row)

export type NewInvoice = Pick<
  Invoice,
  | 'id'
  | 'partnerId'
  | 'reference'
  | 'requestHash'
  | 'title'
  | 'description'
  | 'lineItems'
  | 'amountKobo'
  | 'currency'
  | 'customer'
  | 'dueAt'
  | 'callbackUrl'
  | 'creatorMetadata'
>

/** Inserts a draft; undefined when the reference was taken (by a concurrent create that committed first). */
export async function insertDraft(db: Queryable, invoice: NewInvoice): Promise<Invoice | undefined> {
  return one(
    db,
    `INSERT INTO invoices (id, partner_id, reference, request_hash, status, title, description, amount_kobo, currency, customer, due_at, callback_url, creator_metadata, line_items)
     VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (partner_id, reference) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      invoice.id,
      invoice.partnerId,
      invoice.reference,
      invoice.requestHash,
      invoice.title,
      invoice.description,
      invoice.amountKobo,
      invoice.currency,
      invoice.customer === null ? null : JSON.stringify(invoice.customer),
      invoice.dueAt,
      invoice.callbackUrl,
      JSON.stringify(invoice.creatorMetadata),
      JSON.stringify(invoice.lineItems),
    ],
  )
}

export async function selectByReference(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<Invoice | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM invoices WHERE partner_id = $1 AND reference = $2`, [partnerId, reference])
}

export async function selectById(db: Queryable, partnerId: string, id: string): Promise<Invoice | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM invoices WHERE partner_id = $1 AND id = $2`, [partnerId, id])
}

export async function lockById(db: Queryable, id: string): Promise<Invoice | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM invoices WHERE id = $1 FOR UPDATE`, [id])
}

/** Publishes a draft at `at` (the caller's clock). */
export async function publish(
  db: Queryable,
  id: string,
  paymentIntentId: string,
  at: Date,
): Promise<Invoice | undefined> {
  return one(
    db,
    `UPDATE invoices SET status = 'published', payment_intent_id = $2, published_at = $4, status_changed_at = $4
      WHERE id = $1 AND status = ANY ($3::text[])
      RETURNING ${COLUMNS}`,
    [id, paymentIntentId, invoiceStates.from('published'), at],
  )
}

/** Adds a payment (already capped at what is owed) to a published or partially paid invoice, at `at` (the caller's clock). */
export async function recordPayment(
  db: Queryable,
  id: string,
  amountKobo: number,
  at: Date,
): Promise<Invoice | undefined> {
  return one(
    db,
    `UPDATE invoices
        SET amount_paid_kobo = amount_paid_kobo + $2,
            status = CASE WHEN amount_paid_kobo + $2 >= amount_kobo THEN 'paid' ELSE 'partially_paid' END,
            paid_at = CASE WHEN amount_paid_kobo + $2 >= amount_kobo THEN $4::timestamptz ELSE NULL END,
            status_changed_at = CASE WHEN status = (CASE WHEN amount_paid_kobo + $2 >= amount_kobo THEN 'paid' ELSE 'partially_paid' END) THEN status_changed_at ELSE $4::timestamptz END
      WHERE id = $1 AND status = ANY ($3::text[]) AND amount_paid_kobo + $2 <= amount_kobo
      RETURNING ${COLUMNS}`,
    [id, amountKobo, invoiceStates.from('paid'), at],
  )
}

export const CANCELLABLE: readonly InvoiceStatus[] = invoiceStates.from('cancelled')

/** Cancels an invoice at `at` (the caller's clock). */
export async function cancel(db: Queryable, id: string, at: Date): Promise<Invoice | undefined> {
  return one(
    db,
    `UPDATE invoices SET status = 'cancelled', cancelled_at = $3, status_changed_at = $3
      WHERE id = $1 AND status = ANY ($2::text[])
      RETURNING ${COLUMNS}`,
    [id, CANCELLABLE, at],
  )
}

export async function list(
  db: Queryable,
  query: { partnerId: string; status?: InvoiceStatus; limit: number; cursor?: string },
): Promise<Invoice[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM invoices
      WHERE partner_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [query.partnerId, query.status ?? null, query.cursor ?? null, query.limit],
  )
}
