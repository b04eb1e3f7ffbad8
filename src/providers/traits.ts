// What each adapter's provider promises and how it speaks (types.ts ProviderTraits), by adapter:
// shown by `rail provider list` without opening a profile's secrets, and read by the adapters.
import type { AdapterKind } from './capabilities.ts'
import { sandboxTraits } from './sandbox-adapter.ts'
import type { ProviderTraits } from './types.ts'

/**
 * Paystack refuses a transfer reference it has seen (a resend never pays twice) and keeps no
 * request validity window: "no record" of a send never proves it was not received, so such an
 * instruction is never failed as not received, and never sent to another provider.
 */
export const PAYSTACK_TRAITS: ProviderTraits = {
  deduplicatesReferences: true,
  requestValidityWindowMs: null,
  referenceFormat: 'lowercase letters, digits, - and _, 16 to 50 characters (a Rail reference, a lowercase UUID, is used as it is)',
  amountUnit: 'kobo',
  webhookAuthentication: 'x-paystack-signature: HMAC-SHA512 (hex) of the raw body keyed with the secret key; optionally from Paystack\'s published addresses only',
}

/** Monnify refuses a disbursement reference it has seen, keeps no validity window, and speaks naira with decimals. */
export const MONNIFY_TRAITS: ProviderTraits = {
  deduplicatesReferences: true,
  requestValidityWindowMs: null,
  referenceFormat: 'letters, digits, - and _, up to 64 characters (a Rail reference, a lowercase UUID, is used as it is)',
  amountUnit: 'naira',
  webhookAuthentication: 'monnify-signature: HMAC-SHA512 (hex) of the raw body keyed with the client secret',
}

export function traitsOf(adapter: AdapterKind): ProviderTraits {
  if (adapter === 'paystack') return PAYSTACK_TRAITS
  if (adapter === 'monnify') return MONNIFY_TRAITS
  return sandboxTraits()
}
