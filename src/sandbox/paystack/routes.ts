// The sandbox's Paystack dialect over HTTP, under /sandbox-paystack: Paystack's paths, bodies,
// envelope, statuses and errors (its base URL the only difference), answered from the sandbox
// bank's books. Bearer auth with the key sandboxPaystackSecretKey derives; the bank's fault
// injection and magic amounts on every business route. Handlers answer every outcome themselves
// in Paystack's shape; only an injected fault is answered otherwise (a dropped connection, a 500).
import type { FastifyReply } from 'fastify'
import { randomUUID } from 'node:crypto'
import { withTransaction } from '../../platform/db.ts'
import { sandboxPaystackSecretKey } from '../dialect-credentials.ts'
import {
  dialectRoutes,
  SANDBOX_PAYSTACK_PREFIX,
  SANDBOX_PAYSTACK_PROFILE,
  type DialectHandler,
  type DialectRoute,
  type SandboxDialectDeps,
} from '../dialects.ts'
import {
  bankJson,
  creditTransactionJson,
  customerJson,
  dedicatedAccountJson,
  recipientJson,
  transferCreatedJson,
  transferJson,
  transferStatus,
} from './shapes.ts'
import * as store from './store.ts'
import { checkSecretKey, sendData, sendError, stringField } from './wire.ts'
import { PAYOUT_LISTENER, queueTransferEvent } from './webhooks.ts'

/**
 * The integration's float before anything moved: ₦100,000,000. The balance is this, plus the
 * credits paid into its dedicated accounts, less the transfers it made that have not failed or
 * been reversed (store.balanceKobo). Transfers are not refused for a short balance.
 */
export const SANDBOX_PAYSTACK_OPENING_BALANCE_KOBO = 10_000_000_000
/** Paystack's transfer references: 16 to 50 lowercase letters, digits, '-' and '_'. */
const TRANSFER_REFERENCE = /^[a-z0-9_-]{16,50}$/
/** The longest reason kept (the bank's narration). */
const REASON_LENGTH_MAX = 100
const PER_PAGE_DEFAULT = 50
const PER_PAGE_MAX = 100
/** Far past any page that holds something: a page number this large only asks for nothing. */
const PAGE_MAX = 1_000_000

export function registerRoutes(deps: SandboxDialectDeps): void {
  const secretKey = sandboxPaystackSecretKey(deps.bankSecret)
  // A payout made through the dialect is announced when its outcome is registered or it is reversed.
  deps.bank.onPayoutChange(PAYOUT_LISTENER)
  const route = dialectRoutes(deps, SANDBOX_PAYSTACK_PREFIX, async (request, reply) =>
    checkSecretKey(request, reply, secretKey),
  )
  registerRecipientRoutes(route)
  registerTransfers(route)
  registerCustomerRoutes(route)
  route('GET', '/transaction', listTransactions)
  route('GET', '/balance', async ({ pool }, _request, reply) => {
    const balance = await store.balanceKobo(pool, SANDBOX_PAYSTACK_OPENING_BALANCE_KOBO)
    return sendData(reply, 200, 'Balances retrieved', [{ currency: 'NGN', balance }])
  })
}

/** Name enquiry and recipients. */
function registerRecipientRoutes(route: DialectRoute): void {
  route('GET', '/bank/resolve', async ({ bank }, request, reply) => {
    const query = request.query as Record<string, unknown>
    const accountNumber = stringField(query, 'account_number')
    const bankCode = stringField(query, 'bank_code')
    if (!accountNumber || !bankCode)
      return sendError(reply, 400, 'Account number and bank code are required', 'Provide account_number and bank_code')
    if (!/^[0-9]{10}$/.test(accountNumber)) return cannotResolve(reply)
    const answer = await bank.nameEnquiry(bankCode, accountNumber)
    if (answer.responseCode === '16')
      return sendError(reply, 400, `Unknown bank code: ${bankCode}`, 'Use a bank code from the List Banks endpoint')
    if (answer.responseCode !== '00' || !answer.accountName) return cannotResolve(reply)
    return sendData(reply, 200, 'Account number resolved', {
      account_number: accountNumber,
      account_name: answer.accountName,
      bank_id: Number(bankCode),
    })
  })

  route('POST', '/transferrecipient', async ({ bank, pool }, request, reply) => {
    const body = request.body
    const type = stringField(body, 'type')
    const name = stringField(body, 'name')
    const accountNumber = stringField(body, 'account_number')
    const bankCode = stringField(body, 'bank_code')
    const currency = stringField(body, 'currency') ?? 'NGN'
    if (!type || !name || !accountNumber || !bankCode)
      return missingParams(reply, 'type, name, account_number and bank_code are required')
    if (type !== 'nuban')
      return sendError(reply, 400, 'Recipient type is invalid', 'The sandbox pays nuban recipients only')
    if (currency !== 'NGN') return sendError(reply, 400, 'Currency is not supported', 'Use NGN')
    if (name.length > 100) return sendError(reply, 400, 'Name is too long', 'Give a name of at most 100 characters')
    const answer = /^[0-9]{10}$/.test(accountNumber) ? await bank.nameEnquiry(bankCode, accountNumber) : undefined
    if (answer?.responseCode !== '00' || !answer.accountName)
      return sendError(
        reply,
        400,
        'Cannot resolve account',
        'Ensure that you provide the correct account number and bank code',
      )
    const description = (stringField(body, 'description') ?? '').slice(0, 200)
    const recipient = await store.createRecipient(pool, {
      name,
      bankCode,
      accountNumber,
      accountName: answer.accountName,
      description,
    })
    return sendData(reply, 201, 'Transfer recipient created successfully', recipientJson(recipient))
  })

  route('GET', '/transferrecipient/:code', async ({ pool }, request, reply) => {
    const recipient = await store.findRecipient(pool, (request.params as { code: string }).code)
    if (!recipient) return notFound(reply, 'Recipient', 'the code or id of a recipient of this integration')
    return sendData(reply, 200, 'Transfer recipient retrieved', recipientJson(recipient))
  })
}

function registerTransfers(route: DialectRoute): void {
  route('POST', '/transfer', initiateTransfer, (request) => {
    const body = request.body as Record<string, unknown> | undefined
    return {
      amountKobo: typeof body?.amount === 'number' ? body.amount : undefined,
      transferReference: typeof body?.reference === 'string' ? body.reference : undefined,
    }
  })
  route('GET', '/transfer/verify/:reference', async (deps, request, reply) => {
    const reference = (request.params as { reference: string }).reference
    return sendTransfer(deps, reply, reference, 'the reference')
  })
  route('GET', '/transfer/:code', async (deps, request, reply) => {
    const found = await store.transferByIdOrCode(deps.pool, (request.params as { code: string }).code)
    return sendTransfer(deps, reply, found?.reference, 'the code or id')
  })
}

/** A transfer as it is now (asking the bank settles a payout whose registered outcome is due), or 404. */
async function sendTransfer(
  { bank, pool }: SandboxDialectDeps,
  reply: FastifyReply,
  reference: string | undefined,
  given: string,
): Promise<FastifyReply> {
  if (reference) await bank.requery(reference)
  const transfer = reference && (await store.transferByReference(pool, reference))
  if (!transfer) return notFound(reply, 'Transfer', `${given} of a transfer made on this integration`)
  return sendData(reply, 200, 'Transfer retrieved', transferJson(transfer))
}

/** Customers and their dedicated accounts. */
function registerCustomerRoutes(route: DialectRoute): void {
  route('POST', '/customer', async ({ pool }, request, reply) => {
    const body = request.body
    const email = stringField(body, 'email')
    if (!email) return missingParams(reply, 'Email Address is required')
    if (!/^[^@\s]{1,64}@[^@\s]{1,189}$/.test(email))
      return sendError(reply, 400, 'Invalid Email Address Passed', 'Provide a valid email address')
    const [firstName, lastName, phone] = [
      stringField(body, 'first_name'),
      stringField(body, 'last_name'),
      stringField(body, 'phone'),
    ]
    if ((firstName?.length ?? 0) > 50 || (lastName?.length ?? 0) > 50 || (phone?.length ?? 0) > 20)
      return sendError(reply, 400, 'A field is too long', 'Names take at most 50 characters, a phone number 20')
    const customer = await store.upsertCustomer(pool, {
      email,
      firstName: firstName || undefined,
      lastName: lastName || undefined,
      phone: phone || undefined,
    })
    return sendData(reply, 200, 'Customer created', customerJson(customer))
  })

  route('POST', '/dedicated_account', async ({ bank, pool }, request, reply) => {
    const customerId = stringField(request.body, 'customer')
    if (!customerId) return missingParams(reply, 'Customer is required')
    const customer = await store.findCustomer(pool, customerId)
    if (!customer)
      return sendError(reply, 400, 'Customer not found', 'Create the customer first, then pass its code or id')
    const active = await store.activeDedicatedAccount(pool, customer.id)
    if (active) return sendData(reply, 200, 'NUBAN successfully created', dedicatedAccountJson(active))
    // The bank allocates once per reference: a retry of this request gets the same account.
    const clientReference = `${customer.customerCode}/${await store.dedicatedAccountCount(pool, customer.id)}`
    const account = await bank.allocateVirtualAccount(
      SANDBOX_PAYSTACK_PROFILE,
      clientReference,
      dedicatedAccountName(customer),
    )
    const preferredBank = (stringField(request.body, 'preferred_bank') || bankJson(bank.bankCode).slug).slice(0, 50)
    const dedicated = await store.recordDedicatedAccount(pool, customer.id, account.accountNumber, preferredBank)
    return sendData(reply, 200, 'NUBAN successfully created', dedicatedAccountJson(dedicated))
  })

  route('GET', '/dedicated_account', listDedicatedAccounts)

  route('GET', '/dedicated_account/:id', async ({ pool }, request, reply) => {
    const account = await store.findDedicatedAccount(pool, (request.params as { id: string }).id)
    if (!account) return noDedicatedAccount(reply)
    return sendData(reply, 200, 'Customer retrieved', dedicatedAccountJson(account))
  })

  route('DELETE', '/dedicated_account/:id', async ({ bank, pool }, request, reply) => {
    const found = await store.findDedicatedAccount(pool, (request.params as { id: string }).id)
    if (!found) return noDedicatedAccount(reply)
    await bank.archiveVirtualAccount(SANDBOX_PAYSTACK_PROFILE, found.accountNumber)
    await store.deactivateDedicatedAccount(pool, found.id)
    const account = (await store.findDedicatedAccount(pool, String(found.id)))!
    return sendData(reply, 200, 'Managed Account Successfully Unassigned', dedicatedAccountJson(account))
  })
}

/** GET /dedicated_account: the dedicated accounts (of a customer, active or not when asked), oldest first, with Paystack's `meta` paging. */
const listDedicatedAccounts: DialectHandler = async ({ pool }, request, reply) => {
  const query = request.query as Record<string, unknown>
  const paging = pagingOf(query)
  const active = stringField(query, 'active')
  if (!paging || (active !== undefined && active !== 'true' && active !== 'false')) {
    return sendError(
      reply,
      400,
      'Invalid query parameters',
      'perPage and page are positive integers; active is true or false',
    )
  }
  const customerKey = stringField(query, 'customer')
  const customer = customerKey ? await store.findCustomer(pool, customerKey) : undefined
  const accounts = (customerKey && !customer ? [] : await store.dedicatedAccountsOf(pool, customer?.id)).filter(
    (account) => active === undefined || String(account.active) === active,
  )
  const { data, meta } = pageOf(accounts, paging)
  return sendData(reply, 200, 'Managed accounts successfully retrieved', data.map(dedicatedAccountJson), { meta })
}

/** Paystack's 404 for something the integration does not have. */
function notFound(reply: FastifyReply, what: string, given: string): FastifyReply {
  return sendError(reply, 404, `${what} not found`, `Ensure that you provide ${given}`)
}

function noDedicatedAccount(reply: FastifyReply): FastifyReply {
  return notFound(reply, 'Dedicated account', 'the id of a dedicated account of this integration')
}

/** Paystack's answer to a name enquiry that finds no holder. */
function cannotResolve(reply: FastifyReply): FastifyReply {
  return sendError(
    reply,
    422,
    'Could not resolve account name. Check parameters or try again.',
    "Ensure that you're passing the correct bank code and account number",
  )
}

function missingParams(reply: FastifyReply, message: string): FastifyReply {
  return sendError(reply, 400, message, 'Provide all required params')
}

/** Paystack names a dedicated account after the integration and the customer. */
function dedicatedAccountName(customer: store.Customer): string {
  const name = [customer.firstName, customer.lastName].filter(Boolean).join(' ') || customer.email.split('@')[0]!
  return `PAYSTACK SANDBOX/${name}`.slice(0, 100)
}

/**
 * POST /transfer: a payout on the bank's books under the same reference, answered with the
 * bank's verdict (pending until the simulator registers an outcome; failed at once for a refusal).
 * A reference used before is refused and moves nothing: the bank's reference is the check.
 */
const initiateTransfer: DialectHandler = async ({ bank, pool }, request, reply) => {
  const body = request.body
  const source = stringField(body, 'source')
  const amount = (body as Record<string, unknown> | undefined)?.amount
  const recipientId = stringField(body, 'recipient')
  const currency = stringField(body, 'currency') ?? 'NGN'
  const reference = stringField(body, 'reference') ?? randomUUID()
  const reason = (stringField(body, 'reason') ?? '').slice(0, REASON_LENGTH_MAX)
  if (!source || amount === undefined || !recipientId)
    return missingParams(reply, 'source, amount and recipient are required')
  if (source !== 'balance')
    return sendError(reply, 400, 'Invalid transfer source', 'Transfers are made from your balance: source "balance"')
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1)
    return sendError(reply, 400, 'Invalid amount', 'Pass the amount as a positive integer in kobo')
  if (currency !== 'NGN') return sendError(reply, 400, 'Currency is not supported', 'Use NGN')
  if (!TRANSFER_REFERENCE.test(reference))
    return sendError(
      reply,
      400,
      'Invalid transfer reference',
      'A reference has 16 to 50 lowercase letters, digits, - and _',
    )
  if (await store.transferByReference(pool, reference)) return duplicateReference(reply)
  const recipient = await store.findRecipient(pool, recipientId)
  if (!recipient)
    return sendError(reply, 400, 'Recipient specified is invalid', 'Create the recipient first, then pass its code')
  const answer = await bank.transfer({
    kind: 'payout',
    reference,
    destinationBankCode: recipient.bankCode,
    destinationAccountNumber: recipient.accountNumber,
    amountKobo: amount,
    narration: reason || undefined,
  })
  // Recorded with its webhook job in one transaction; a refusal at once is announced as transfer.failed.
  await withTransaction(pool, async (tx) => {
    const recorded = await store.recordTransfer(tx, { reference, recipient, amountKobo: amount, reason })
    const recordedTransfer = recorded ? await store.transferByReference(tx, reference) : undefined
    if (recordedTransfer && transferStatus(recordedTransfer) === 'failed')
      await queueTransferEvent(tx, reference, 'settled')
  })
  // 26: the bank holds this reference already (a concurrent duplicate, or a request whose answer
  // was lost before the dialect recorded it, recorded above): nothing moved this time.
  if (answer.responseCode === '26') return duplicateReference(reply)
  const transfer = (await store.transferByReference(pool, reference))!
  return sendData(
    reply,
    200,
    transferStatus(transfer) === 'failed' ? 'Transfer failed' : 'Transfer has been queued',
    transferCreatedJson(transfer),
  )
}

/** Paystack's refusal of a reference used on an earlier transfer: nothing is moved. */
function duplicateReference(reply: FastifyReply): FastifyReply {
  return sendError(
    reply,
    400,
    'Duplicate Transfer Reference',
    'Generate a new reference for every transfer; verify the earlier one with GET /transfer/verify/:reference',
  )
}

/**
 * GET /transaction: the credits paid into the dedicated accounts (of one customer when asked),
 * newest first, as Paystack transactions with its `meta` paging. Only successful ones exist.
 */
const listTransactions: DialectHandler = async ({ bank, pool }, request, reply) => {
  const query = request.query as Record<string, unknown>
  const paging = pagingOf(query)
  const from = dateOf(stringField(query, 'from'))
  const to = dateOf(stringField(query, 'to'))
  if (!paging || from === null || to === null)
    return sendError(
      reply,
      400,
      'Invalid query parameters',
      'perPage and page are positive integers; from and to are ISO 8601 dates',
    )
  const customerKey = stringField(query, 'customer') ?? stringField(query, 'customer_code')
  const customer = customerKey ? await store.findCustomer(pool, customerKey) : undefined
  const status = stringField(query, 'status')
  const accountFilter = stringField(query, 'virtual_account_number')
  const accounts = customerKey && !customer ? [] : await store.dedicatedAccountsOf(pool, customer?.id)
  const transactions: Record<string, unknown>[] = []
  const channel = stringField(query, 'channel')
  // Only successful payments into dedicated accounts exist here.
  if ((status === undefined || status === 'success') && (channel === undefined || channel === 'dedicated_nuban')) {
    for (const account of accounts.filter((candidate) => !accountFilter || candidate.accountNumber === accountFilter)) {
      const credits = (await bank.inboundCredits(SANDBOX_PAYSTACK_PROFILE, account.accountNumber, from)) ?? []
      for (const credit of credits)
        if (!to || new Date(credit.creditedAt) <= to) transactions.push(creditTransactionJson(credit, account))
    }
  }
  transactions.sort((a, b) => String(b.paid_at).localeCompare(String(a.paid_at)) || (b.id as number) - (a.id as number))
  const totalVolume = transactions.reduce((sum, transaction) => sum + (transaction.amount as number), 0)
  const { data, meta } = pageOf(transactions, paging, { total_volume: totalVolume })
  return sendData(reply, 200, 'Transactions retrieved', data, { meta })
}

/** The page asked for (perPage or per_page, and page), or undefined when either is no positive integer. */
function pagingOf(query: Record<string, unknown>): { perPage: number; page: number } | undefined {
  const perPage = pageNumber(
    stringField(query, 'perPage') ?? stringField(query, 'per_page'),
    PER_PAGE_DEFAULT,
    PER_PAGE_MAX,
  )
  const page = pageNumber(stringField(query, 'page'), 1, PAGE_MAX)
  return perPage === undefined || page === undefined ? undefined : { perPage, page }
}

/** One page of a list, and Paystack's `meta` for it (`totals`, such as total_volume, follow its total). */
function pageOf<T>(
  all: T[],
  { perPage, page }: { perPage: number; page: number },
  totals: Record<string, number> = {},
): { data: T[]; meta: Record<string, number> } {
  const skipped = (page - 1) * perPage
  const pageCount = Math.max(1, Math.ceil(all.length / perPage))
  const meta = { total: all.length, ...totals, skipped, perPage, page, pageCount }
  return { data: all.slice(skipped, skipped + perPage), meta }
}

/** A paging query parameter: the default when absent, at most `max`, undefined when it is no positive integer. */
function pageNumber(value: string | undefined, fallback: number, max: number): number | undefined {
  if (value === undefined || value === '') return fallback
  if (!/^[0-9]{1,9}$/.test(value) || Number(value) < 1) return undefined
  return Math.min(Number(value), max)
}

/** A date query parameter: undefined when absent, null when unreadable. */
function dateOf(value: string | undefined): Date | undefined | null {
  if (value === undefined || value === '') return undefined
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}
