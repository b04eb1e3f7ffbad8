// Statements as CSV (RFC 4180): a header row, then the page's lines in the JSON's order, CRLF line
// ends, a field quoted when it holds a comma, a quote, CR or LF (its quotes doubled). Amounts are
// integer kobo. No part of a text cell may start a formula in a spreadsheet, whichever separator
// it splits on (docs/statements.md, "CSV"): see textCell.
import type { StatementLine } from './service.ts'

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8'

export const CSV_COLUMNS = [
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
] as const

/** A cell that starts (after spaces) with one of these runs as a formula; the apostrophe goes first. */
const FORMULA_AT_CELL_START = /^ *[=+\-@\t\r]/
/**
 * Inside a cell: a spreadsheet that splits on semicolons or tabs, or that ignores quoting and
 * breaks at a line end, starts a new cell after any of `, ; TAB CR LF`; a formula character there
 * (after spaces) gets an apostrophe before it, so `ok;=1+1` is written `ok;'=1+1`. Tab and CR are
 * separators themselves, so a run of them is covered too.
 */
const FORMULA_AFTER_SEPARATOR = /([,;\t\r\n] *)(?=[=+\-@])/g

/** A text cell, made inert for spreadsheets and quoted as RFC 4180 asks. */
export function textCell(value: string | null): string {
  if (value === null) return ''
  const inside = value.replace(FORMULA_AFTER_SEPARATOR, "$1'")
  const inert = FORMULA_AT_CELL_START.test(inside) ? `'${inside}` : inside
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
