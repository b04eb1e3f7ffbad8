// Monnify's bearer token: POST /api/v1/auth/login with HTTP Basic (API key and client secret)
// answers an access token and how long it lasts. It is kept in the profile's session (shared by
// every adapter the registry makes for the profile), renewed shortly before it expires and once
// when Monnify answers 401 to it; concurrent callers share one login in flight.
import { createHash } from 'node:crypto'
import type { RealAdapterOptions } from '../adapter-options.ts'
import type { HttpAnswer } from '../http.ts'
import { objectOf } from '../json.ts'
import { readEnvelope } from './mapping.ts'

/** A token is renewed this long before Monnify says it expires: a call made with it must still find it valid. */
export const TOKEN_RENEW_BEFORE_MS = 60_000
/** A token whose lifetime Monnify does not say is kept this long at most. */
const TOKEN_LIFETIME_MS_MAX = 3_600_000

interface Token {
  accessToken: string
  expiresAtMs: number
}

/** A login's answer, read: the token and its lifetime in seconds; undefined when it is not one. */
export function readLogin(answer: HttpAnswer): { accessToken: string; expiresInS: number } | undefined {
  if (!answer.ok || answer.httpStatus !== 200) return undefined
  const envelope = readEnvelope(answer.body)
  const body = objectOf(envelope?.responseBody)
  if (!envelope?.requestSuccessful || typeof body?.accessToken !== 'string' || body.accessToken === '') return undefined
  const expiresInS =
    typeof body.expiresIn === 'number' && Number.isFinite(body.expiresIn) && body.expiresIn > 0
      ? body.expiresIn
      : TOKEN_LIFETIME_MS_MAX / 1000
  return { accessToken: body.accessToken, expiresInS }
}

export class MonnifyAuth {
  readonly #options: RealAdapterOptions
  /** The session's keys are per API key: a profile given new keys logs in again. */
  readonly #tokenKey: string
  readonly #loginKey: string

  constructor(options: RealAdapterOptions) {
    this.#options = options
    const keyId = createHash('sha256')
      .update(options.secrets.apiKey ?? '')
      .digest('hex')
      .slice(0, 16)
    this.#tokenKey = `monnify:token:${keyId}`
    this.#loginKey = `monnify:login:${keyId}`
  }

  /** The Basic credentials of the login (and of the routes Monnify guards with them). */
  basic(): string {
    const { apiKey, secretKey } = this.#options.secrets
    if (!apiKey || !secretKey)
      throw new Error(`provider ${this.#options.profile.name} has no Monnify API key and client secret`)
    return `Basic ${Buffer.from(`${apiKey}:${secretKey}`).toString('base64')}`
  }

  /** A token good for a call now: the kept one, the login in flight, or a new login. */
  async bearer(): Promise<{ token: string } | { error: string }> {
    const kept = this.#options.session.get(this.#tokenKey) as Token | undefined
    if (kept && this.#options.clock.now().getTime() < kept.expiresAtMs - TOKEN_RENEW_BEFORE_MS)
      return { token: kept.accessToken }
    let inFlight = this.#options.session.get(this.#loginKey) as
      Promise<{ token: string } | { error: string }> | undefined
    if (!inFlight) {
      inFlight = this.#login().finally(() => this.#options.session.delete(this.#loginKey))
      this.#options.session.set(this.#loginKey, inFlight)
    }
    return inFlight
  }

  /** Forgets a token Monnify refused (401), unless another caller has renewed it already. */
  invalidate(token: string): void {
    const kept = this.#options.session.get(this.#tokenKey) as Token | undefined
    if (kept?.accessToken === token) this.#options.session.delete(this.#tokenKey)
  }

  async #login(): Promise<{ token: string } | { error: string }> {
    const startedMs = this.#options.clock.now().getTime()
    const answer = await this.#options.http.call({
      operation: 'login',
      reference: '',
      method: 'POST',
      url: `${this.#options.baseUrl}/api/v1/auth/login`,
      headers: { Authorization: this.basic(), 'Content-Type': 'application/json' },
      body: '{}',
      classify: (reply) => ({
        outcome: readLogin(reply) ? 'successful' : 'unknown',
        responseCode: reply.ok ? String(reply.body.responseCode ?? '') : null,
      }),
    })
    const login = readLogin(answer)
    if (!login)
      return { error: answer.ok ? `Monnify login answered ${answer.httpStatus}` : `Monnify login: ${answer.error}` }
    // The lifetime runs from when the login was asked: the answer may have taken a while to come.
    const lifetimeMs = Math.min(login.expiresInS * 1000, TOKEN_LIFETIME_MS_MAX)
    this.#options.session.set(this.#tokenKey, {
      accessToken: login.accessToken,
      expiresAtMs: startedMs + lifetimeMs,
    } satisfies Token)
    return { token: login.accessToken }
  }
}
