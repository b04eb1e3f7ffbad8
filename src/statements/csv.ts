// Statements as CSV (RFC 4180): a header row, then the page's lines in the JSON's order, CRLF line
// ends, a field quoted when it holds a comma, a quote, CR or LF (its quotes doubled). Amounts are
// integer kobo. A text cell a spreadsheet would run as a formula (starting =, +, -, @, tab or CR)
// is prefixed with an apostrophe (docs/statements.md, "CSV").
import type { StatementLine } from './service.ts'

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'

export const CSV_COLUMNS = ['id', 'postedAt', 'cause', 'direction', 'amountKobo', 'balanceAfterKobo', 'objectType', 'objectId', 'objectReference', 'narration'] as const

const FORMULA_START = /^[=+\-@\t\r]/

/** A text cell, made inert for spreadsheets and quoted as RFC 4180 asks. */
export function textCell(value: string | null): string {
  if (value === null) return ''
  const inert = FORMULA_START.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert
}

function lineRow(line: StatementLine): string {
  return [
    textCell(line.id),
    textCell(line.postedAt.toISOString()),
    textCell(line.cause),
    textCell(line.direction),
    String(line.amountKobo),
    String(line.balanceAfterKobo),
    textCell(line.object?.type ?? null),
    textCell(line.object?.id ?? null),
    textCell(line.object?.reference ?? null),
    textCell(line.narration),
  ].join(',')
}

export function statementCsv(lines: readonly StatementLine[]): string {
  return [CSV_COLUMNS.join(','), ...lines.map(lineRow)].map((row) => `${row}\r\n`).join('')
}

/**
 * Whether the client asked for CSV: `text/csv` named with q > 0, and `application/json` not named
 * with as much weight (a named type outranks wildcards; JSON wins a tie).
 */
export function prefersCsv(accept: string | undefined): boolean {
  if (!accept) return false
  const weights = new Map<string, number>()
  for (const part of accept.split(',')) {
    const [type, ...parameters] = part.trim().toLowerCase().split(';')
    const q = parameters.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const weight = q === undefined ? 1 : Number(q.slice(2))
    if (type) weights.set(type.trim(), Number.isFinite(weight) ? weight : 0)
  }
  const csv = weights.get('text/csv') ?? 0
  const json = weights.get('application/json')
  return csv > 0 && (json === undefined || csv > json)
}
