// The objects the sandbox's Paystack dialect answers with, in Paystack's shapes (field names,
// nesting, nulls) as its published API description gives them: recipients, transfers, customers,
// dedicated accounts and the transactions paid into them. Amounts are kobo, as Paystack's are.
import { findBank } from '../../banking/nip/banks.ts'
import { nipOutcome } from '../../banking/nip/codes.ts'
import type { InboundCreditNotice } from '../types.ts'
import type { Customer, DedicatedAccount, Recipient, Transfer } from './store.ts'
import { bankSlug, SANDBOX_DOMAIN, SANDBOX_INTEGRATION_ID } from './wire.ts'

/** Paystack's transfer statuses the dialect gives: in progress, paid, failed, or paid and then reversed. */
export type TransferStatus = 'pending' | 'success' | 'failed' | 'reversed'

/** The bank's NIP code in Paystack's words: 00 success, a final failure failed, anything else (09) pending. */
export function transferStatus(transfer: Pick<Transfer, 'responseCode' | 'reversedAt'>): TransferStatus {
  if (transfer.reversedAt) return 'reversed'
  const outcome = nipOutcome(transfer.responseCode)
  return outcome === 'success' ? 'success' : outcome === 'failed' ? 'failed' : 'pending'
}

/** What Paystack's gateway says of a failed transfer, by the bank's code (a reader finds the cause in these words). */
const FAILURE_REASONS: Record<string, string> = {
  '05': 'Do not honour',
  '06': 'Dormant account',
  '07': 'Invalid account',
  '16': 'Unknown bank code',
  '51': 'Insufficient funds',
  '91': 'Beneficiary bank not available',
}

export function bankName(bankCode: string): string {
  return findBank(bankCode)?.name ?? bankCode
}

export function recipientJson(recipient: Recipient): Record<string, unknown> {
  const at = recipient.createdAt.toISOString()
  return {
    active: true,
    createdAt: at,
    currency: recipient.currency,
    description: recipient.description,
    domain: SANDBOX_DOMAIN,
    email: '',
    id: recipient.id,
    integration: SANDBOX_INTEGRATION_ID,
    metadata: null,
    name: recipient.name,
    recipient_code: recipient.recipientCode,
    type: 'nuban',
    updatedAt: at,
    is_deleted: false,
    isDeleted: false,
    recipient_account: recipient.accountNumber,
    institution_code: recipient.bankCode,
    details: {
      authorization_code: null,
      account_number: recipient.accountNumber,
      account_name: recipient.accountName,
      bank_code: recipient.bankCode,
      bank_name: bankName(recipient.bankCode),
    },
  }
}

/**
 * A transfer as Paystack gives it (verify, fetch, webhooks): `recipient` is the recipient object.
 * POST /transfer gives the recipient's id instead (transferCreatedJson). `status` may be given
 * for a webhook, which speaks of the change it announces.
 */
export function transferJson(
  transfer: Transfer,
  status: TransferStatus = transferStatus(transfer),
): Record<string, unknown> {
  const updatedAt = transfer.reversedAt ?? transfer.settledAt ?? transfer.createdAt
  return {
    amount: transfer.amountKobo,
    createdAt: transfer.createdAt.toISOString(),
    currency: transfer.currency,
    domain: SANDBOX_DOMAIN,
    failures: null,
    id: transfer.id,
    integration: SANDBOX_INTEGRATION_ID,
    reason: transfer.reason,
    reference: transfer.reference,
    request: transfer.id,
    source: 'balance',
    source_details: null,
    status,
    titan_code: null,
    transfer_code: transfer.transferCode,
    transferred_at: status === 'success' || status === 'reversed' ? (transfer.settledAt?.toISOString() ?? null) : null,
    updatedAt: updatedAt.toISOString(),
    recipient: recipientJson(transfer.recipient),
    session: { provider: transfer.sessionId ? 'nip' : null, id: transfer.sessionId || null },
    fee_charged: 0,
    fees_breakdown: null,
    gateway_response:
      status === 'failed'
        ? (FAILURE_REASONS[transfer.responseCode] ?? 'Transfer failed')
        : status === 'pending'
          ? null
          : 'Approved',
  }
}

/** POST /transfer's answer: the transfer with its recipient's id, and the fields only that answer has. */
export function transferCreatedJson(transfer: Transfer): Record<string, unknown> {
  return { ...transferJson(transfer), recipient: transfer.recipient.id, transfersessionid: [], transfertrials: [] }
}

function customerFields(customer: Customer): Record<string, unknown> {
  return {
    id: customer.id,
    first_name: customer.firstName ?? '',
    last_name: customer.lastName ?? '',
    email: customer.email,
    customer_code: customer.customerCode,
    phone: customer.phone ?? '',
    metadata: {},
    risk_action: 'default',
    international_format_phone: internationalPhone(customer.phone),
  }
}

/** A Nigerian number in international form (+234…), or null when there is none to give. */
function internationalPhone(phone: string | null): string | null {
  if (!phone) return null
  const digits = phone.replace(/[^0-9]/g, '')
  if (digits.startsWith('234')) return `+${digits}`
  if (digits.startsWith('0')) return `+234${digits.slice(1)}`
  return null
}

export function customerJson(customer: Customer): Record<string, unknown> {
  return {
    ...customerFields(customer),
    transactions: [],
    subscriptions: [],
    authorizations: [],
    integration: SANDBOX_INTEGRATION_ID,
    domain: SANDBOX_DOMAIN,
    createdAt: customer.createdAt.toISOString(),
    updatedAt: customer.updatedAt.toISOString(),
    identified: false,
    identifications: null,
  }
}

export function bankJson(bankCode: string): { name: string; id: number; slug: string } {
  const name = bankName(bankCode)
  return { name, id: Number(bankCode), slug: bankSlug(name) }
}

export function dedicatedAccountJson(account: DedicatedAccount): Record<string, unknown> {
  return {
    bank: bankJson(account.bankCode),
    account_name: account.accountName,
    account_number: account.accountNumber,
    assigned: account.active,
    currency: 'NGN',
    metadata: null,
    active: account.active,
    split_config: null,
    id: account.id,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
    assignment: {
      integration: SANDBOX_INTEGRATION_ID,
      assignee_id: account.customer.id,
      assignee_type: 'Customer',
      expired: !account.active,
      account_type: 'PAY-WITH-TRANSFER-RECURRING',
      assigned_at: account.createdAt.toISOString(),
      expired_at: account.active ? null : account.updatedAt.toISOString(),
    },
    customer: customerFields(account.customer),
  }
}

/** A transaction's numeric id: the bank's session sequence (the session id's last 12 digits), unique in the bank. */
export function transactionId(sessionId: string): number {
  return Number(sessionId.slice(-12))
}

/**
 * A credit paid into a dedicated account as Paystack reports it (the transaction list and
 * charge.success): channel dedicated_nuban, the payer in `authorization`. Its reference is the
 * NIP session id, which names the credit at every bank it passed.
 */
export function creditTransactionJson(credit: InboundCreditNotice, account: DedicatedAccount): Record<string, unknown> {
  const customer = customerFields(account.customer)
  const payerBank = credit.payerBankCode ? bankName(credit.payerBankCode) : null
  return {
    id: transactionId(credit.sessionId),
    domain: SANDBOX_DOMAIN,
    status: 'success',
    reference: credit.sessionId,
    amount: credit.amountKobo,
    message: null,
    gateway_response: 'Approved',
    paid_at: credit.creditedAt,
    created_at: credit.creditedAt,
    channel: 'dedicated_nuban',
    currency: credit.currency,
    ip_address: null,
    metadata: {
      receiver_account_number: credit.accountNumber,
      receiver_bank: bankName(credit.bankCode),
      custom_fields: [],
    },
    log: null,
    fees: 0,
    fees_split: null,
    customer: {
      ...customer,
      first_name: account.customer.firstName,
      last_name: account.customer.lastName,
      phone: account.customer.phone,
      metadata: null,
    },
    authorization: {
      authorization_code: `AUTH_${credit.sessionId.slice(-10)}`,
      bin: null,
      last4: null,
      exp_month: null,
      exp_year: null,
      channel: 'dedicated_nuban',
      card_type: 'transfer',
      bank: payerBank,
      country_code: 'NG',
      brand: 'Managed Account',
      reusable: false,
      signature: null,
      account_name: null,
      sender_bank: payerBank,
      sender_bank_account_number: credit.payerAccountNumber,
      sender_country: 'NG',
      sender_name: credit.payerName,
      narration: credit.narration,
      receiver_bank_account_number: credit.accountNumber,
      receiver_bank: bankName(credit.bankCode),
    },
    plan: {},
    split: {},
    subaccount: {},
    order_id: null,
    paidAt: credit.creditedAt,
    createdAt: credit.creditedAt,
    requested_amount: credit.amountKobo,
    source: null,
    connect: null,
    pos_transaction_data: null,
  }
}
