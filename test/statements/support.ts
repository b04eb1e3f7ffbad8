// Statement helpers for tests: read every page of a statement (JSON and CSV), check that each page
// sums and that the running balances chain from line to line and page to page, and parse CSV back.
import { expect } from 'vitest'
import type { RailClient, RailResponse } from '../../src/client/index.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

export type LineJson = Schemas['StatementLine']

export type StatementJson = Schemas['Statement']

export const signedKobo = (line: LineJson) => (line.direction === 'credit' ? line.amountKobo : -line.amountKobo)

export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const entries = Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined)
  if (entries.length === 0) return path
  return `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams(entries.map(([key, value]): [string, string] => [key, String(value)]))}`
}

/** One page; its lines sum (opening + lines = closing) and chain within the page. */
export async function statementPage(client: RailClient, path: string): Promise<StatementJson> {
  const response = await client.get<StatementJson>(path)
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  const page = response.body
  expect(page.openingBalanceKobo + page.data.reduce((sum, line) => sum + signedKobo(line), 0)).toBe(
    page.closingBalanceKobo,
  )
  if (page.data.length > 0) expect(page.data[0]!.balanceAfterKobo).toBe(page.closingBalanceKobo)
  for (let i = 0; i + 1 < page.data.length; i++) {
    // Newest first: the line below is the balance before this one.
    expect(page.data[i]!.balanceAfterKobo - signedKobo(page.data[i]!)).toBe(page.data[i + 1]!.balanceAfterKobo)
  }
  return page
}

/**
 * Every page of a statement, newest first, with its CSV twin checked line for line; the pages
 * chain (a page's opening balance is the next page's closing). Answers the lines and the range's
 * opening and closing balances.
 */
export async function wholeStatement(
  client: RailClient,
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<{ lines: LineJson[]; openingBalanceKobo: number; closingBalanceKobo: number; pages: number }> {
  const lines: LineJson[] = []
  let cursor: string | undefined
  let previous: StatementJson | undefined
  let first: StatementJson | undefined
  let pages = 0
  do {
    const pagePath = withQuery(path, { ...query, cursor })
    const page = await statementPage(client, pagePath)
    await expectCsvOf(client, pagePath, page)
    if (previous) expect(page.closingBalanceKobo).toBe(previous.openingBalanceKobo)
    first ??= page
    lines.push(...page.data)
    previous = page
    cursor = page.nextCursor ?? undefined
    pages++
  } while (cursor !== undefined)
  return {
    lines,
    openingBalanceKobo: previous!.openingBalanceKobo,
    closingBalanceKobo: first!.closingBalanceKobo,
    pages,
  }
}

/**
 * What a spreadsheet must see in a text cell: a leading =, +, -, @, tab or CR made inert, and a
 * =, +, - or @ after any separator a spreadsheet may split on (, ; TAB CR LF, then spaces).
 */
export const inertText = (text: string) => {
  const inside = text.replace(/([,;\t\r\n] *)(?=[=+\-@])/g, "$1'")
  return /^ *[=+\-@\t\r]/.test(inside) ? `'${inside}` : inside
}

/**
 * The CSV of a page holds the JSON page's lines. Money may be moving meanwhile (a settlement
 * sweeping collections): the CSV is compared with a JSON page read just before and after it that
 * did not change.
 */
export async function expectCsvOf(client: RailClient, path: string, page: StatementJson): Promise<void> {
  let before = page
  for (let attempt = 1; ; attempt++) {
    const response = await client.get<string>(path, { headers: { Accept: 'text/csv' } })
    const after = (await client.get<StatementJson>(path)).body
    if (JSON.stringify(after) === JSON.stringify(before) || attempt === 5) return expectCsvResponse(response, after)
    before = after
  }
}

function expectCsvResponse(response: RailResponse<string>, page: StatementJson): void {
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
  expect(response.headers.get('vary')).toMatch(/accept/i)
  expect(response.headers.get('x-next-cursor')).toBe(page.nextCursor)
  expect(Number(response.headers.get('x-opening-balance-kobo'))).toBe(page.openingBalanceKobo)
  expect(Number(response.headers.get('x-closing-balance-kobo'))).toBe(page.closingBalanceKobo)
  const text = String(response.body ?? '')
  expect(text.endsWith('\r\n')).toBe(true)
  const [header, ...rows] = parseCsv(text)
  expect(header).toEqual([
    'id',
    'postedAt',
    'cause',
    'direction',
    'amountKobo',
    'balanceAfterKobo',
    'objectType',
    'objectId',
    'objectReference',
    'narration',
  ])
  expect(rows).toEqual(
    page.data.map((line) => [
      line.id,
      line.postedAt,
      line.cause,
      line.direction,
      String(line.amountKobo),
      String(line.balanceAfterKobo),
      inertText(line.object?.type ?? ''),
      inertText(line.object?.id ?? ''),
      inertText(line.object?.reference ?? ''),
      inertText(line.narration ?? ''),
    ]),
  )
}

/** RFC 4180: records end in CRLF; a quoted field may hold commas, CR, LF and doubled quotes. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let i = 0
  const endField = () => {
    record.push(field)
    field = ''
  }
  while (i < text.length) {
    if (text[i] === '"' && field === '') {
      i++
      while (i < text.length && !(text[i] === '"' && text[i + 1] !== '"')) {
        field += text[i]
        i += text[i] === '"' ? 2 : 1
      }
      i++ // the closing quote
      continue
    }
    if (text[i] === ',') {
      endField()
      i++
    } else if (text[i] === '\r' && text[i + 1] === '\n') {
      endField()
      records.push(record)
      record = []
      i += 2
    } else {
      field += text[i]
      i++
    }
  }
  if (field !== '' || record.length > 0) throw new Error('CSV does not end with CRLF')
  return records
}
