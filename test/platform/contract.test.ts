// The contract a generated client relies on: an unsupported method on a known path is 405 with
// Allow, in the one error body (docs/errors.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../support/app.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

describe('an unsupported method on a known path', () => {
  it('answers 405 method_not_allowed with Allow listing the methods the path has, signed or not', async () => {
    const { client } = await app.newPartner()
    const cases: [method: string, path: string, allowed: string][] = [
      ['DELETE', '/api/v1/rail/refunds', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/rail/outbound/0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42', 'GET, HEAD'],
      ['GET', '/api/v1/rail/sandbox/simulate-outbound-settlement', 'POST'],
      ['POST', '/openapi.json', 'GET, HEAD'],
    ]
    for (const [method, path, allowed] of cases) {
      const unsigned = await fetch(`${app.baseUrl}${path}`, { method })
      const signed = await client.request(method, path)
      for (const [answer, body] of [[unsigned, await unsigned.json()], [signed, signed.body]] as const) {
        expect([answer.status, answer.headers.get('allow')], `${method} ${path}`).toEqual([405, allowed])
        expect(body, `${method} ${path}`).toEqual({ statusCode: 405, error: 'method_not_allowed', message: expect.stringContaining(method), details: { allowedMethods: allowed.split(', ') } })
      }
    }
  })

  it('a path no route has stays 404 not_found', async () => {
    const answer = await fetch(`${app.baseUrl}/api/v1/rail/no-such-thing`, { method: 'DELETE' })
    expect([answer.status, answer.headers.get('allow'), ((await answer.json()) as { error: string }).error]).toEqual([404, null, 'not_found'])
  })
})
