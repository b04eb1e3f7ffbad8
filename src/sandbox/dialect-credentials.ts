// The credentials of the provider dialects the sandbox serves (/sandbox-paystack, /sandbox-monnify),
// derived from the sandbox bank's secret: `rail serve` and its workers, which share that secret,
// agree on them without another secret file, and the sandbox provider profiles
// (sandbox-paystack, sandbox-monnify) need no sealed secrets of their own.
import { createHmac } from 'node:crypto'

function derive(bankSecret: string, label: string, length: number): string {
  return createHmac('sha256', bankSecret).update(`rail sandbox dialect:${label}`).digest('hex').slice(0, length)
}

/** The sandbox Paystack integration's secret key: its bearer token and the key its webhooks are signed with. */
export function sandboxPaystackSecretKey(bankSecret: string): string {
  return `sk_test_${derive(bankSecret, 'paystack', 40)}`
}

/** The sandbox Monnify merchant's API key and client secret (token login, webhook signatures) and its contract code. */
export function sandboxMonnifyCredentials(bankSecret: string): {
  apiKey: string
  secretKey: string
  contractCode: string
} {
  return {
    apiKey: `MK_TEST_${derive(bankSecret, 'monnify-api-key', 10).toUpperCase()}`,
    secretKey: derive(bankSecret, 'monnify-secret', 32).toUpperCase(),
    contractCode: String(parseInt(derive(bankSecret, 'monnify-contract', 8), 16) % 10_000_000_000).padStart(10, '0'),
  }
}
