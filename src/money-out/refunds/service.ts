// Refunds (issue 18, item 7): money of a confirmed inbound credit paid back to the account it came
// from (the sender's account and bank the credit carries). A refund is an ordinary outbound
// transfer of the payment pipeline — origin 'refund', its id the refund's — held on a ledger
// account its caller names: the partner's collections or float (the Refunds API), an escrow's
// holding account (escrow cancel and expiry), the partner's suspense account (triage). When the
// payout ends, the outbound owner calls the handler this module registered as the payout's origin,
// on the pipeline's transaction: the refund succeeds or fails, its event is recorded, and the origin
// that asked is told through the handler it registered (RefundOrigins). A failed payout's hold was
// voided (the money is back on its source); a new refund may be made. A credit never refunds more
// than it brought, less its refunds pending or succeeded: checked in SQL under the credit's lock,
// so two refunds of one credit at once cannot exceed it.
// The module's face: the core (core.ts), the payout's end (payouts.ts), the Refunds API (api.ts).
export {
  refundCreditInTransaction,
  refundOrigins,
  refundsOfOrigin,
  toRefundJson,
  type CreditRefundRequest,
  type Refund,
  type RefundEndedHandler,
  type RefundOrigin,
  type RefundOrigins,
  type RefundsDeps,
} from './core.ts'
export type { RefundState } from './states.ts'
export { plugRefunds } from './payouts.ts'
export {
  createRefunds,
  getRefund,
  listRefunds,
  REFUNDS_PAGE_MAX,
  type InvoiceIntentOf,
  type RefundApiRequest,
  type RefundRequestView,
  type RefundsApiDeps,
} from './api.ts'
export type { CreditForRefund, RefundableCredits } from './credits.ts'
