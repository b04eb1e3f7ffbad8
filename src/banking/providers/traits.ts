// What each adapter's provider promises and how it speaks (types.ts ProviderTraits), by adapter:
// shown by `rail provider list` without opening a profile's secrets. Each adapter declares its own.
import type { AdapterKind } from './capabilities.ts'
import { MONNIFY_TRAITS } from './monnify/adapter.ts'
import { PAYSTACK_TRAITS } from './paystack/adapter.ts'
import { sandboxTraits } from './sandbox-adapter.ts'
import type { ProviderTraits } from './types.ts'

export function traitsOf(adapter: AdapterKind): ProviderTraits {
  if (adapter === 'paystack') return PAYSTACK_TRAITS
  if (adapter === 'monnify') return MONNIFY_TRAITS
  return sandboxTraits()
}
