// The two final answers every adapter gives, built one way: a provider's yes with what it gave,
// and a refusal with its NIP code (`unknown` stays a literal where it is read: it carries no code).
import type { ProviderResult } from './types.ts'

/** Done (code 00): the provider's message, its reference for what it did, and what it gave. */
export function successful<T>(responseMessage: string, providerReference: string, value: T): ProviderResult<T> {
  return { outcome: 'successful', responseCode: '00', responseMessage, providerReference, value }
}

/** Refused for good, by its NIP code; the provider's reference when it gave one. */
export function failed(
  responseCode: string,
  responseMessage: string,
  providerReference: string | null = null,
): ProviderResult<never> {
  return { outcome: 'failed', responseCode, responseMessage, providerReference }
}
