// `npm run sdk:generate`: writes the SDK's generated files from the OpenAPI document.
//
//   npm run sdk:generate                          # the document this checkout's app serves
//   npm run sdk:generate -- http://host/openapi.json   # the document a running server serves
//
// Without a URL it builds the app in this process, as `rail serve` does, and asks it for
// /openapi.json over its own router; building the routes needs no database.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { generate } from './codegen.ts'

const url = process.argv[2]
const document = url === undefined ? await servedByThisCheckout() : await fetchDocument(url)
const files = await generate(document)
for (const [name, text] of Object.entries(files)) {
  const path = fileURLToPath(new URL(`../src/generated/${name}`, import.meta.url))
  writeFileSync(path, text)
  console.log(`wrote ${path}`)
}

async function fetchDocument(from: string): Promise<Record<string, unknown>> {
  const response = await fetch(from)
  if (!response.ok) throw new Error(`${from} answered ${response.status}`)
  return (await response.json()) as Record<string, unknown>
}

async function servedByThisCheckout(): Promise<Record<string, unknown>> {
  const { buildApi } = await import('../../../src/app.ts')
  const { createPool } = await import('../../../src/platform/db.ts')
  // Never connected: building the routes and the document reads nothing from the database.
  const pool = createPool('postgres://sdk-generate@127.0.0.1:1/unused', 1, 'rail-sdk-generate')
  const app = await buildApi({ pool, masterKey: Buffer.alloc(32), sandboxBank: { secret: 'sdk-generate' } })
  try {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' })
    if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}`)
    return response.json()
  } finally {
    await app.close()
    await pool.end()
  }
}
