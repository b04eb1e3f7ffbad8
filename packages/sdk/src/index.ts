// @rail/sdk: a typed client for the Rail payments API. No runtime dependencies: Node's own
// fetch and crypto.
export { Rail, type RailOptions } from './client.ts'
export { ListCall, type Page } from './pagination.ts'
export type { RailResponse } from './transport.ts'
export { verifyWebhook, type RailEvent, type VerifyWebhookOptions, type WebhookHeaders } from './webhooks.ts'
export { canonicalRequest, signatureHeaders, SIGNATURE_WINDOW_S, type SigningKey } from './signing.ts'
export {
  RailApiError,
  RailAuthenticationError,
  RailConflictError,
  RailConnectionError,
  RailError,
  RailInvalidRequestError,
  RailNotFoundError,
  RailPermissionError,
  RailRateLimitError,
  RailServerError,
  WebhookVerificationError,
  type RailErrorCode,
} from './errors.ts'
export type {
  CallOptions,
  ListItem,
  OperationId,
  Params,
  RailEventMap,
  RailOperations,
  RailWebhookEvent,
  RequestBody,
  ResponseBody,
  Schemas,
  components,
  operations,
  paths,
  webhooks,
} from './types.ts'
export { OPERATIONS } from './generated/operations.ts'
