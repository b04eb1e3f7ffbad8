// The matching rules of inbound credits (src/collections/credits/matching.ts), without a database:
// every account purpose × account status × currency × intent status (expiry included) × owner,
// every wallet and unknown-number case, every owner answer (none, part, all; moved on or not) over
// credits under, equal to and over what the owner takes, and what a credit does to its intent
// (under, exactly, over its amount, or of any amount). The write path (batch.ts) writes what these answer.
import { expect, it } from 'vitest'
import {
  CREDIT_CODES,
  accountSettlement,
  creditTransfer,
  decideCredit,
  decideOwned,
  firstMove,
  placelessSettlement,
  type CreditDecision,
} from '../../src/collections/credits/matching.ts'
import { creditedIntent, type PaymentIntent } from '../../src/collections/intents/service.ts'

const PURPOSES = ['persistent', 'fbo', 'payment_intent'] as const
const ACCOUNT_STATUSES = ['active', 'archived'] as const
const INTENT_STATUSES = ['pending', 'partially_paid', 'paid', 'overpaid', 'expired'] as const
const OWNERS = [null, 'invoice', 'escrow'] as const
const CURRENCIES = ['NGN', 'USD'] as const

/** Every intent an account of this purpose can have: none, unless it is a payment intent's. */
function intentsOf(purpose: (typeof PURPOSES)[number]) {
  if (purpose !== 'payment_intent') return [undefined]
  return INTENT_STATUSES.flatMap((status) => OWNERS.map((ownerType) => ({ status, ownerType })))
}

/** The rules in the order they apply: the first that holds decides. */
function expectedAtAccount(
  creditCurrency: string,
  account: { currency: string; status: string },
  intent: { status: string; ownerType: string | null } | undefined,
) {
  if (creditCurrency !== account.currency) return { kind: 'unmatched', partnerId: 'p1', reason: 'currency_mismatch' }
  if (account.status === 'archived') return { kind: 'unmatched', partnerId: 'p1', reason: 'account_archived' }
  if (intent?.status === 'expired') return { kind: 'unmatched', partnerId: 'p1', reason: 'payment_intent_expired' }
  if (intent?.ownerType) return { kind: 'owned', partnerId: 'p1', ownerType: intent.ownerType }
  return { kind: 'applied', partnerId: 'p1' }
}

it('decides every credit to a virtual account: account purpose × status × currency × intent status × owner', () => {
  let cases = 0
  for (const purpose of PURPOSES) {
    for (const status of ACCOUNT_STATUSES) {
      for (const accountCurrency of CURRENCIES) {
        for (const creditCurrency of CURRENCIES) {
          for (const intent of intentsOf(purpose)) {
            const account = { partnerId: 'p1', currency: accountCurrency, status }
            const decision = decideCredit({ currency: creditCurrency }, { kind: 'account', account, intent })
            expect(decision, JSON.stringify({ purpose, account, creditCurrency, intent })).toEqual(
              expectedAtAccount(creditCurrency, account, intent),
            )
            cases++
          }
        }
      }
    }
  }
  // persistent and FBO: 2 statuses × 2 × 2 currencies each; payment intents: × 5 intent statuses × 3 owners.
  expect(cases).toBe(2 * (2 * 2 * 2) + 2 * 2 * 2 * 5 * 3)
})

it('decides every credit to a wallet and to a number Rail does not know', () => {
  for (const walletCurrency of CURRENCIES) {
    for (const creditCurrency of CURRENCIES) {
      const decision = decideCredit(
        { currency: creditCurrency },
        { kind: 'wallet', wallet: { partnerId: 'p2', currency: walletCurrency } },
      )
      // A customer's own transfer funds the wallet whatever the provider's merchantCredit capability says: only the currency decides.
      expect(decision).toEqual(
        creditCurrency === walletCurrency
          ? { kind: 'fund_wallet', partnerId: 'p2' }
          : { kind: 'unmatched', partnerId: 'p2', reason: 'currency_mismatch' },
      )
    }
  }
  for (const creditCurrency of CURRENCIES) {
    expect(decideCredit({ currency: creditCurrency }, { kind: 'unknown', partnerId: null })).toEqual({
      kind: 'unattributed',
    })
    expect(decideCredit({ currency: creditCurrency }, { kind: 'unknown', partnerId: 'p3' })).toEqual({
      kind: 'unmatched',
      partnerId: 'p3',
      reason: 'unknown_account',
    })
  }
})

it("moves each decision's whole credit from the provider's settlement account to where it goes, or nowhere", () => {
  const moves: [CreditDecision, ReturnType<typeof firstMove>][] = [
    [
      { kind: 'applied', partnerId: 'p' },
      { purpose: 'collect', from: 'provider_settlement', to: 'collections', code: CREDIT_CODES.collected },
    ],
    [
      { kind: 'owned', partnerId: 'p', ownerType: 'invoice' },
      { purpose: 'collect', from: 'provider_settlement', to: 'collections', code: CREDIT_CODES.collected },
    ],
    [
      { kind: 'owned', partnerId: 'p', ownerType: 'escrow' },
      { purpose: 'collect', from: 'provider_settlement', to: 'collections', code: CREDIT_CODES.collected },
    ],
    [
      { kind: 'unmatched', partnerId: 'p', reason: 'account_archived' },
      { purpose: 'collect', from: 'provider_settlement', to: 'suspense', code: CREDIT_CODES.unmatched },
    ],
    [
      { kind: 'fund_wallet', partnerId: 'p' },
      { purpose: 'fund_wallet', from: 'provider_settlement', to: 'wallet', code: CREDIT_CODES.walletFunding },
    ],
    [{ kind: 'unattributed' }, undefined],
  ]
  for (const [decision, move] of moves) expect(firstMove(decision), decision.kind).toEqual(move)
})

/** A credit of 10,000 kobo, and what an owner may answer for it: none, part, all — of what it took, none, part or all moved on. */
const AMOUNT_KOBO = 10_000
const TAKEN = [0, 1, 4_000, 9_999, AMOUNT_KOBO]

it('reads every owner answer: none (to triage), part (the excess to triage), all — and what stays in collections', () => {
  for (const ownerType of ['invoice', 'escrow'] as const) {
    for (const takenKobo of TAKEN) {
      for (const movedOnKobo of [undefined, 0, Math.floor(takenKobo / 2), takenKobo]) {
        const decision = decideOwned(ownerType, AMOUNT_KOBO, { takenKobo, movedOnKobo })
        const label = JSON.stringify({ ownerType, takenKobo, movedOnKobo })
        if (takenKobo === 0) {
          expect(decision, label).toEqual({
            kind: 'closed',
            reason: `${ownerType}_closed`,
            move: { purpose: 'unmatch', from: 'collections', to: 'suspense', code: CREDIT_CODES.unmatched },
          })
          continue
        }
        const excessKobo = AMOUNT_KOBO - takenKobo
        expect(decision, label).toEqual({
          kind: 'taken',
          keptKobo: takenKobo - (movedOnKobo ?? 0),
          excess:
            excessKobo === 0
              ? null
              : {
                  amountKobo: excessKobo,
                  reason: `${ownerType}_overpaid`,
                  move: { purpose: 'collect', from: 'collections', to: 'suspense', code: CREDIT_CODES.unmatched },
                },
        })
        // Every kobo of the credit is somewhere, once: kept in collections, moved on by the owner, or in suspense.
        if (decision.kind === 'taken')
          expect(decision.keptKobo + (movedOnKobo ?? 0) + (decision.excess?.amountKobo ?? 0)).toBe(AMOUNT_KOBO)
      }
    }
  }
})

it('refuses an owner answer that would move money the credit never brought', () => {
  const refused = [
    { takenKobo: AMOUNT_KOBO + 1 },
    { takenKobo: -1 },
    { takenKobo: 0.5 },
    { takenKobo: Number.NaN },
    { takenKobo: 4_000, movedOnKobo: 4_001 },
    { takenKobo: 4_000, movedOnKobo: -1 },
    { takenKobo: 0, movedOnKobo: 1 },
  ]
  for (const answer of refused)
    expect(() => decideOwned('invoice', AMOUNT_KOBO, answer), JSON.stringify(answer)).toThrow(/owner (took|moved on)/)
})

function intent(amountKobo: number | null, amountReceivedKobo: number, status: PaymentIntent['status']): PaymentIntent {
  const createdAt = new Date('2026-01-01T00:00:00Z')
  return {
    amountKobo,
    amountReceivedKobo,
    status,
    statusChangedAt: createdAt,
    paidAt: status === 'paid' || status === 'overpaid' ? createdAt : null,
  } as PaymentIntent
}

it('credits an intent under, exactly at and over its amount, and an intent of any amount', () => {
  const at = new Date('2026-02-02T00:00:00Z')
  const before = new Date('2026-01-01T00:00:00Z')
  const cases: [PaymentIntent, number, Partial<PaymentIntent>][] = [
    [
      intent(30_000, 0, 'pending'),
      10_000,
      { status: 'partially_paid', amountReceivedKobo: 10_000, statusChangedAt: at, paidAt: null },
    ],
    [
      intent(30_000, 0, 'pending'),
      30_000,
      { status: 'paid', amountReceivedKobo: 30_000, statusChangedAt: at, paidAt: at },
    ],
    [
      intent(30_000, 0, 'pending'),
      30_001,
      { status: 'overpaid', amountReceivedKobo: 30_001, statusChangedAt: at, paidAt: at },
    ],
    [
      intent(30_000, 10_000, 'partially_paid'),
      10_000,
      { status: 'partially_paid', amountReceivedKobo: 20_000, statusChangedAt: before, paidAt: null },
    ],
    [
      intent(30_000, 10_000, 'partially_paid'),
      20_000,
      { status: 'paid', amountReceivedKobo: 30_000, statusChangedAt: at, paidAt: at },
    ],
    [
      intent(30_000, 10_000, 'partially_paid'),
      25_000,
      { status: 'overpaid', amountReceivedKobo: 35_000, statusChangedAt: at, paidAt: at },
    ],
    [
      intent(30_000, 30_000, 'paid'),
      1,
      { status: 'overpaid', amountReceivedKobo: 30_001, statusChangedAt: at, paidAt: before },
    ],
    [
      intent(30_000, 30_001, 'overpaid'),
      1,
      { status: 'overpaid', amountReceivedKobo: 30_002, statusChangedAt: before, paidAt: before },
    ],
    [intent(null, 0, 'pending'), 1, { status: 'paid', amountReceivedKobo: 1, statusChangedAt: at, paidAt: at }],
    [
      intent(null, 5_000, 'paid'),
      7_000,
      { status: 'paid', amountReceivedKobo: 12_000, statusChangedAt: before, paidAt: before },
    ],
  ]
  for (const [found, amountKobo, expected] of cases)
    expect(creditedIntent(found, amountKobo, at), JSON.stringify({ found, amountKobo })).toMatchObject(expected)
})

it("settles a credit on its account (with a BRR when the account issues them), its wallet, its partner's suspense, or nobody", () => {
  const account = { id: 'va1', partnerId: 'p1', brr: null }
  expect(accountSettlement({ id: 'c1' }, account, { status: 'applied' })).toEqual({
    id: 'c1',
    status: 'applied',
    partnerId: 'p1',
    virtualAccountId: 'va1',
    brr: null,
    unmatchedReason: null,
    walletId: null,
  })
  expect(
    accountSettlement(
      { id: 'c1' },
      { ...account, brr: 'BRR-ACCOUNT' },
      { status: 'unmatched', reason: 'account_archived' },
    ),
  ).toMatchObject({
    status: 'unmatched',
    unmatchedReason: 'account_archived',
    brr: expect.stringMatching(/^BRR\d{17}$/),
  })
  expect(placelessSettlement({ id: 'c2' }, { kind: 'fund_wallet', partnerId: 'p2' }, 'w1')).toEqual({
    id: 'c2',
    status: 'applied',
    partnerId: 'p2',
    virtualAccountId: null,
    brr: null,
    unmatchedReason: null,
    walletId: 'w1',
  })
  expect(
    placelessSettlement({ id: 'c2' }, { kind: 'unmatched', partnerId: 'p2', reason: 'currency_mismatch' }, 'w1'),
  ).toMatchObject({ status: 'unmatched', unmatchedReason: 'currency_mismatch', walletId: 'w1' })
  expect(
    placelessSettlement({ id: 'c3' }, { kind: 'unmatched', partnerId: 'p3', reason: 'unknown_account' }, null),
  ).toMatchObject({ status: 'unmatched', partnerId: 'p3', walletId: null })
  expect(placelessSettlement({ id: 'c4' }, { kind: 'unattributed' }, null)).toEqual({
    id: 'c4',
    status: 'unattributed',
    partnerId: null,
    virtualAccountId: null,
    brr: null,
    unmatchedReason: 'unknown_account',
    walletId: null,
  })
  expect(() => placelessSettlement({ id: 'c5' }, { kind: 'applied', partnerId: 'p1' }, null)).toThrow(
    /settled on its account/,
  )
})

it("gives each move of a credit's money a transfer id derived from the credit's and the move's purpose, so a retry finds it", () => {
  const credit = { id: '0190a0b0-0000-7000-8000-000000000001', amountKobo: 700, currency: 'NGN' }
  const collect = creditTransfer(credit, 'collect', 'a', 'b', CREDIT_CODES.collected)
  expect(collect).toMatchObject({
    debitAccountId: 'a',
    creditAccountId: 'b',
    amountKobo: 700,
    currency: 'NGN',
    code: 'collection_credit',
    sourceType: 'inbound_credit',
    sourceId: credit.id,
  })
  expect(creditTransfer(credit, 'collect', 'x', 'y', CREDIT_CODES.unmatched).id).toBe(collect.id)
  const ids = new Set(
    ['collect', 'unmatch', 'assign', 'fund_wallet'].map((purpose) => creditTransfer(credit, purpose, 'a', 'b', 'c').id),
  )
  expect(ids.size).toBe(4)
})
