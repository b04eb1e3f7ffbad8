// The error catalogue in code and docs/errors.md list the same codes with the same statuses.
import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { ERROR_CATALOGUE } from '../../src/platform/errors.ts'

it('docs/errors.md documents every code with its status, and no other', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
  const documented = new Map(
    [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]),
  )
  const catalogue = new Map(Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, entry.status]))
  expect(documented).toEqual(catalogue)
})
