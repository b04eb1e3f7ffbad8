// "Try it out" in /docs for signed routes: Swagger UI runs this function in the browser before each
// request (its source is written into the page). The partner authorizes with its key id in
// railKeyId and its signing secret in railSignature; the function replaces that secret with the
// request's signature (docs/authentication.md) and sets X-Rail-Timestamp, so the secret never
// leaves the browser. It must stand alone: no imports, no names from this module.

/** The part of Swagger UI's request object the signature needs. */
export interface TryItRequest {
  url: string
  method: string
  headers: Record<string, string>
  body?: unknown
}

export async function signTryItRequest(request: TryItRequest): Promise<TryItRequest> {
  const secret = request.headers['X-Rail-Signature']
  if (!request.headers['X-Rail-Key-Id'] || !secret) return request
  const encoder = new TextEncoder()
  const hex = (bytes: ArrayBuffer) =>
    Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('')
  const body =
    typeof request.body === 'string'
      ? request.body
      : request.body === undefined || request.body === null
        ? ''
        : JSON.stringify(request.body)
  if (typeof request.body !== 'string' && body !== '') request.body = body
  const url = new URL(request.url)
  const timestamp = String(Math.floor(Date.now() / 1000))
  const bodyHash = hex(await crypto.subtle.digest('SHA-256', encoder.encode(body)))
  const canonical = [timestamp, request.method.toUpperCase(), url.pathname + url.search, bodyHash].join('\n')
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ])
  request.headers['X-Rail-Timestamp'] = timestamp
  request.headers['X-Rail-Signature'] = `v1=${hex(await crypto.subtle.sign('HMAC', key, encoder.encode(canonical)))}`
  return request
}
