// The repository stands alone: whoever clones it finds every contract and decision the code relies
// on in its own docs/. A comment or a page that sends the reader to a document outside the
// repository (the interface documents it was first written from, a design or style file beside
// it) is a dead end in a clone, so no tracked file may name one; and every docs/ page a file
// cites, and every numbered section of docs/design.md it cites, must exist.
//
// Shipped migrations (db/migrations) are not read: they are history, never edited once committed
// (postgres-migrations refuses a file whose hash changed, and CONTRIBUTING.md forbids rewording
// one), so a wording rule must not reach them; what a migration said when it shipped stays.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const SELF = path.relative(ROOT, import.meta.filename)

/** Names of documents that live outside the repository, as they were cited. */
const OUTSIDE_NAMES: ReadonlyArray<readonly [string, RegExp]> = [
  ['an interface document by number', /\bseeds? ?-?0\d\d\b/i],
  ['an interface document by file name', /\b00[0-2]_[0-9a-f]{16}\b/],
  [
    'an interface document by description',
    /\b(?:the seeds?|its seed|escrow seed|wallet seed|seed-shaped|interface documents?(?! *(?:\{|extends\b)))\b/i,
  ],
  ['the outside design file', /\bDESIGN(?:\.md\b| ?§)/],
  ['the outside banking facts file', /\bNIGERIA\.md\b/i],
  ['the outside style file', /\bSTYLE\.md\b/i],
  ['the folder beside the repository', /\.\.\/shared\b|\bshared\/(?:seeds|DESIGN|NIGERIA|STYLE)\b/i],
]

interface TextFile {
  file: string
  lines: string[]
}

/** Shipped migrations: history, left as they were written (see the top of this file). */
const MIGRATIONS = 'db/migrations/'

/** Every file git tracks or would track (committed, staged or new and not ignored) that is text, but the migrations. */
function repositoryTextFiles(): TextFile[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  const files = [...new Set(listed.split('\0').filter((file) => file !== '' && !file.startsWith(MIGRATIONS)))]
  const texts: TextFile[] = []
  for (const file of files) {
    const absolute = path.join(ROOT, file)
    if (!existsSync(absolute)) continue // deleted in the working tree, not yet committed
    const content = readFileSync(absolute)
    if (content.includes(0)) continue // binary: screenshots and the like
    texts.push({ file, lines: content.toString('utf8').split('\n') })
  }
  return texts
}

/** A line as the continuation of the one before: without its comment marker or indentation. */
function continuation(line: string): string {
  return line.replace(/^\s*(?:\/\/|\*|--|#|>)?\s*/, '')
}

/** The first word of each heading of a markdown page, without a leading §. */
function headingWords(markdown: string): Set<string> {
  const words = new Set<string>()
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6}\s+§?\s*([^\s]+)/.exec(line)
    if (heading) words.add(heading[1]!.replace(/[.:,]$/, '').toLowerCase())
  }
  return words
}

describe('the repository stands alone', () => {
  const texts = repositoryTextFiles()

  it('reads the files git tracks', () => {
    expect(texts.some((text) => text.file === 'README.md')).toBe(true)
    expect(texts.some((text) => text.file === SELF)).toBe(true)
    expect(texts.some((text) => text.file === 'db/schema.sql')).toBe(true)
    expect(texts.some((text) => text.file.startsWith(MIGRATIONS))).toBe(false)
  })

  it('names no document outside the repository', () => {
    const found: string[] = []
    for (const { file, lines } of texts) {
      if (file === SELF) continue // this file spells the names it looks for
      lines.forEach((line, index) => {
        // A name may break across two lines of a comment ("the state table of seed" / "// 001").
        const next = lines[index + 1] ?? ''
        const joined = `${line} ${continuation(next)}`
        for (const [what, pattern] of OUTSIDE_NAMES) {
          if (pattern.test(line) || (pattern.test(joined) && !pattern.test(next)))
            found.push(`${file}:${index + 1}: ${what}: ${line.trim().slice(0, 160)}`)
        }
      })
    }
    expect(found).toEqual([])
  })

  it('cites only docs/ pages that exist, and only sections those pages have', () => {
    const broken: string[] = []
    const headings = new Map<string, Set<string>>()
    const sectionsOf = (page: string) => {
      let words = headings.get(page)
      if (!words) headings.set(page, (words = headingWords(readFileSync(path.join(ROOT, page), 'utf8'))))
      return words
    }
    for (const { file, lines } of texts) {
      if (file === SELF) continue // its examples below are not citations
      lines.forEach((line, index) => {
        for (const citation of line.matchAll(/(?<![\w./-])(docs\/[\w./-]+?\.md)(?: ?§ ?([\w-]+))?/g)) {
          const [, page, section] = citation
          if (!existsSync(path.join(ROOT, page!))) broken.push(`${file}:${index + 1}: ${page} does not exist`)
          else if (section !== undefined && !sectionsOf(page!).has(section.toLowerCase()))
            broken.push(`${file}:${index + 1}: ${page} has no section §${section}`)
        }
      })
    }
    expect(broken).toEqual([])
  })

  it('finds a name from outside and a dead citation when there is one', () => {
    // The checks above could pass by matching nothing; these lines are what they must catch.
    const outside = [
      'see seed 001, "Endpoints"',
      'as DESIGN §9 says',
      'from ../shared/NIGERIA.md',
      'the escrow seed signs',
      `the state table of seed ${continuation('// 001 (each arrow)')}`,
    ]
    for (const line of outside)
      expect(
        OUTSIDE_NAMES.some(([, pattern]) => pattern.test(line)),
        line,
      ).toBe(true)
    const inside = [
      'see docs/contracts/escrow.md §Webhooks',
      'docs/design.md §9',
      'a shared lock',
      'Nigerian banks',
      'decideSignedChange',
    ]
    for (const line of inside)
      expect(
        OUTSIDE_NAMES.some(([, pattern]) => pattern.test(line)),
        line,
      ).toBe(false)
    expect(headingWords('# Title\n## §9 Events\n### Webhooks: the body\n').has('9')).toBe(true)
    expect(headingWords('## §10 Open\n').has('1')).toBe(false)
  })
})
