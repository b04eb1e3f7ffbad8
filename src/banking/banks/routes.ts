// Partner routes of banks: the bank list, and the account-name check (docs/banking.md, "Bank list
// and account-name check").
import { Type, type Static } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import type { HttpServer } from '../../platform/http.ts'
import { operations, route, SIGNED } from '../../platform/routes.ts'
import { closedObject, errorResponses, NubanSchema } from '../../platform/schemas.ts'
import { NAME_ENQUIRIES_PER_MINUTE_DEFAULT } from '../providers/service.ts'
import { listBanks, resolveAccount, type BankDeps } from './service.ts'

const BankSchema = Type.Object(
  {
    code: Type.String({
      pattern: '^[0-9]{3}$',
      description: "The bank's 3-digit CBN code: the `bankCode` of every route",
    }),
    name: Type.String({ description: "The bank's name", examples: ['Guaranty Trust Bank'] }),
    nipInstitutionCode: Type.String({
      pattern: '^[0-9]{6}$',
      description: 'The bank\'s 6-digit NIP institution code ("000" and the CBN code)',
      examples: ['000058'],
    }),
  },
  { title: 'Bank', description: 'A Nigerian bank Rail pays to and can ask who holds an account' },
)

const BankListSchema = Type.Object(
  {
    data: Type.Array(BankSchema, { description: 'Every bank, by name' }),
    nextCursor: Type.Null({ description: 'Always null: every bank is on the one page' }),
  },
  { title: 'BankList', description: 'Every bank Rail pays to, on one page' },
)
export type BankJson = Static<typeof BankSchema>
export type BankListJson = Static<typeof BankListSchema>

const ResolveBodySchema = closedObject(
  {
    bankCode: Type.String({ pattern: '^[0-9]{3}$', description: 'The CBN code of a bank of GET /api/v1/rail/banks' }),
    accountNumber: NubanSchema('A 10-digit NUBAN at that bank', ['0000014579']),
  },
  { title: 'BankAccountToResolve', description: 'The account whose holder to ask the bank for' },
)

const ResolvedSchema = Type.Object(
  {
    bankCode: Type.String({ description: 'The bank code asked about' }),
    accountNumber: Type.String({ description: 'The account number asked about', examples: ['0000014579'] }),
    accountName: Type.String({ description: "The holder's name exactly as the bank's name enquiry gives it" }),
  },
  { title: 'ResolvedBankAccount', description: "An account and its holder's name as the bank gives it" },
)
export type ResolvedBankAccountJson = Static<typeof ResolvedSchema>

/** What the OpenAPI document says of the bank operations. */
const OPS = operations('banks', {
  listBanks: {
    summary: 'The banks Rail pays to',
    description:
      'Every Nigerian bank Rail can pay to and ask who holds an account, by name, with its CBN code (the `bankCode` of every route) and its NIP institution code. One page: `nextCursor` is always null.',
  },
  resolveBankAccount: {
    summary: "Who holds an account, by the bank's name enquiry",
    description: [
      "Asks the bank who holds an account (NIP name enquiry), so that a payout's beneficiary name can be checked, or shown to the customer, before paying.",
      'The request is checked before any bank is asked: a code that is no Nigerian bank or a number that is not a NUBAN at that bank (a wrong check digit) is 422 naming the field;',
      'a provider not approved for name checks is 403 `capability_disabled`. A bank that refuses (no such account, a dormant one) is 422 naming `accountNumber`, with the NIP',
      '`responseCode`; a bank that gives no answer is 502 `provider_unavailable` — safe to retry, an enquiry changes nothing. Each partner may make',
      `${NAME_ENQUIRIES_PER_MINUTE_DEFAULT} enquiries a minute by default (RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE), counted only when the bank is asked; past it, 429 \`rate_limited\` with Retry-After.`,
    ].join(' '),
  },
})

export function registerBankRoutes(app: HttpServer, deps: BankDeps): void {
  app.get(
    '/api/v1/rail/banks',
    route(SIGNED, OPS.listBanks, {
      querystring: closedObject({}),
      response: { 200: BankListSchema, ...errorResponses() },
    }),
    async () => ({ data: listBanks(), nextCursor: null }),
  )
  app.post(
    '/api/v1/rail/banks/resolve',
    route(SIGNED, OPS.resolveBankAccount, {
      body: ResolveBodySchema,
      response: {
        200: ResolvedSchema,
        ...errorResponses('capability_disabled', 'rate_limited', 'provider_unavailable'),
      },
    }),
    async (request) => {
      const account = { bankCode: request.body.bankCode, accountNumber: request.body.accountNumber }
      const { accountName } = await resolveAccount(deps, callerOf(request).partner.id, account, request.id)
      return { ...account, accountName }
    },
  )
}
