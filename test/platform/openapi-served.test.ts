// How the API reference is served: the server address its documents name (PUBLIC_URL when set,
// never a caller's Host header), and /docs, where partners type their signing secret, guarded by a
// Content-Security-Policy and never framed. The page itself works under that policy in a real
// browser (test/platform/openapi-docs.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHttpServer, type HttpServer } from '../../src/platform/http.ts'
import { registerOpenApi } from '../../src/platform/openapi.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

const PUBLIC_URL = 'https://rail.example.ng'
const FOREIGN_HOST = 'attacker.example'

type Served = { servers: { url: string }[] }

describe('with PUBLIC_URL set', () => {
  let server: HttpServer
  beforeAll(async () => {
    server = createHttpServer(false)
    await registerOpenApi(server, `${PUBLIC_URL}/`)
    await server.ready()
  })
  afterAll(async () => server?.close())

  it.each(['/openapi.json', '/sandbox-bank/openapi.json', '/docs/json'])(
    '%s names PUBLIC_URL as its server, whatever Host the request carries',
    async (path) => {
      for (const host of [FOREIGN_HOST, 'localhost:8080']) {
        const response = await server.inject({ method: 'GET', url: path, headers: { host } })
        expect(response.statusCode).toBe(200)
        expect((response.json() as Served).servers.map((entry) => entry.url)).toEqual([PUBLIC_URL])
      }
    },
  )

  it('/docs may call PUBLIC_URL from the page', async () => {
    const response = await server.inject({ method: 'GET', url: '/docs/' })
    expect(response.headers['content-security-policy']).toContain(`connect-src 'self' ${PUBLIC_URL};`)
  })
})

describe('without PUBLIC_URL', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(async () => app?.close())

  it('the documents name the address they were asked at', async () => {
    const served = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as Served
    expect(served.servers.map((entry) => entry.url)).toEqual([app.baseUrl])
  })

  it.each(['/docs/', '/docs/static/index.html', '/docs/static/swagger-initializer.js', '/docs/json'])(
    '%s carries a Content-Security-Policy that runs only its own scripts and refuses framing, and X-Frame-Options DENY',
    async (path) => {
      const response = await fetch(`${app.baseUrl}${path}`)
      expect(response.status).toBe(200)
      const policy = Object.fromEntries(
        (response.headers.get('content-security-policy') ?? '').split(';').map((directive) => {
          const [name, ...values] = directive.trim().split(/\s+/)
          return [name, values.join(' ')]
        }),
      )
      expect(policy).toMatchObject({
        'default-src': "'none'",
        'script-src': "'self'",
        'frame-ancestors': "'none'",
        'base-uri': "'none'",
        'object-src': "'none'",
      })
      expect(policy['script-src']).not.toMatch(/unsafe/)
      expect(response.headers.get('x-frame-options')).toBe('DENY')
    },
  )
})
