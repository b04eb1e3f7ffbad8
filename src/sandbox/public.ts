// What Rail's provider registry needs of the provider dialects this sandbox serves: where they are
// mounted, the credentials derived from the bank's secret, and the sandbox Monnify merchant's
// main account (the source of its disbursements).
export { sandboxMonnifyCredentials, sandboxPaystackSecretKey } from './dialect-credentials.ts'
export { SANDBOX_MONNIFY_PREFIX, SANDBOX_PAYSTACK_PREFIX } from './dialects.ts'
export { monnifyMainAccountNumber } from './monnify/disbursements.ts'
export { SANDBOX_BANK_CODE_DEFAULT } from './service.ts'
