// The SDK's guide lists every method (packages/sdk/README.md, "Every method") with its request,
// exactly as the generated table of operations has them: a method added, renamed or removed by
// `npm run sdk:generate` fails here until the guide says so.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { OPERATIONS } from '../../packages/sdk/src/index.ts'
import { PROJECT_ROOT } from '../support/cli.ts'

/** The rows of the guide's "Every method" section: method name → `METHOD /path`. */
function listedMethods(): Map<string, string> {
  const guide = readFileSync(path.join(PROJECT_ROOT, 'packages', 'sdk', 'README.md'), 'utf8')
  const start = guide.indexOf('\n## Every method\n')
  expect(start, 'packages/sdk/README.md has a section "Every method"').toBeGreaterThan(-1)
  const end = guide.indexOf('\n## ', start + 1)
  const listed = new Map<string, string>()
  for (const row of guide.slice(start, end === -1 ? undefined : end).matchAll(/^\| `(\w+)` \| `(\w+ \S+)` \|/gm)) {
    expect(listed.has(row[1]!), `${row[1]} listed twice`).toBe(false)
    listed.set(row[1]!, row[2]!)
  }
  return listed
}

describe('packages/sdk/README.md', () => {
  it('lists every method of the SDK, with its request, and no other', () => {
    const listed = listedMethods()
    const operations = Object.fromEntries(
      Object.entries(OPERATIONS).map(([name, operation]) => [name, `${operation.method} ${operation.path}`]),
    )
    expect(Object.fromEntries([...listed].sort())).toEqual(Object.fromEntries(Object.entries(operations).sort()))
  })
})
