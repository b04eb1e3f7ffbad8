// The CSV of statements on its own: RFC 4180 quoting, formula-injection guard, Accept negotiation,
// and the cause table's fallback for codes it does not know.
import { describe, expect, it } from 'vitest'
import { causeOf } from '../../src/statements/causes.ts'
import { prefersCsv, statementCsv, textCell } from '../../src/statements/csv.ts'
import { parseCsv } from './support.ts'

describe('textCell', () => {
  it.each([
    ['plain', 'plain'],
    ['a, b', '"a, b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\r\nlines', '"two\r\nlines"'],
    ['=1+2', "'=1+2"],
    ['+234', "'+234"],
    ['-5', "'-5"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
    ['=HYPERLINK("u","c")', `"'=HYPERLINK(""u"",""c"")"`],
    [' =1+1', "' =1+1"],
    // No segment a spreadsheet may split off (on ; , TAB or a line end) starts a formula.
    ['ok;=1+1', "ok;'=1+1"],
    ['ok; =1+1', "ok; '=1+1"],
    ['a;+1;-2;@x', "a;'+1;'-2;'@x"],
    ['ok,=1+1', `"ok,'=1+1"`],
    ['ok\t=1+1', "ok\t'=1+1"],
    ['ok\t\t@x', "ok\t\t'@x"],
    ['ok\n=1+1', `"ok\n'=1+1"`],
    ['=1;=2', "'=1;'=2"],
    ['a-b; c+d', 'a-b; c+d'],
    ['rent,\r\n"March"', '"rent,\r\n""March"""'],
  ])('%j → %j', (value, cell) => {
    expect(textCell(value)).toBe(cell)
  })

  it('split on any separator, no piece of a guarded cell starts a formula', () => {
    const hostile = ['ok;=1+1', 'x, -2', 'a\t@SUM(A1)', 'l1\r\n+3', ' ;  =cmd|" /C calc"!A0', '=a;b,=c\t-d']
    for (const value of hostile) {
      for (const piece of textCell(value).split(/[,;\t\r\n"]/))
        expect(piece.trimStart(), JSON.stringify(value)).not.toMatch(/^[=+\-@]/)
    }
  })

  it('an absent value is an empty cell', () => {
    expect(textCell(null)).toBe('')
  })
})

describe('statementCsv', () => {
  it('parses back to the same cells, a header first, CRLF after every record', () => {
    const line = {
      id: '0190d6a0-0000-7000-8000-000000000001',
      postedAt: new Date('2026-01-02T03:04:05.678Z'),
      cause: 'credit' as const,
      direction: 'credit' as const,
      amountKobo: 1_500,
      balanceAfterKobo: -20,
      object: { type: 'wallet_move', id: 'x,y', reference: '-ref' },
      narration: 'rent,\r\n"March"',
    }
    const text = statementCsv([line, { ...line, object: null, narration: null }])
    expect(text.split('\r\n')[0]).toBe(
      'id,postedAt,cause,direction,amountKobo,balanceAfterKobo,objectType,objectId,objectReference,narration',
    )
    expect(parseCsv(text)).toEqual([
      [
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
      ],
      [
        line.id,
        '2026-01-02T03:04:05.678Z',
        'credit',
        'credit',
        '1500',
        '-20',
        'wallet_move',
        'x,y',
        "'-ref",
        'rent,\r\n"March"',
      ],
      [line.id, '2026-01-02T03:04:05.678Z', 'credit', 'credit', '1500', '-20', '', '', '', ''],
    ])
    expect(parseCsv(statementCsv([]))).toHaveLength(1)
  })
})

describe('prefersCsv', () => {
  it.each([
    [undefined, false],
    ['application/json', false],
    ['*/*', false],
    ['text/csv', true],
    ['text/csv; charset=utf-8', true],
    ['text/csv, */*;q=0.1', true],
    ['text/csv;q=0.5, application/json', false],
    ['application/json;q=0.5, text/csv', true],
    ['application/json, text/csv', false],
    ['text/csv;q=0', false],
  ])('%s → %s', (accept, csv) => {
    expect(prefersCsv(accept)).toBe(csv)
  })
})

describe('causeOf', () => {
  it.each([
    [{ code: 'outbound_transfer', sourceType: 'outbound_transfer', originType: 'partner' }, 'payout'],
    [{ code: 'outbound_transfer', sourceType: 'outbound_transfer', originType: 'refund' }, 'refund'],
    [{ code: 'outbound_transfer', sourceType: 'outbound_transfer', originType: 'escrow' }, 'escrow'],
    [{ code: 'outbound_transfer', sourceType: 'outbound_transfer', originType: 'settlement' }, 'settlement'],
    [{ code: 'wallet_credit', sourceType: 'wallet_move', originType: null }, 'credit'],
    [{ code: 'wallet_credit', sourceType: 'inbound_credit', originType: null }, 'funding'],
    [{ code: 'wallet_bank_payout', sourceType: 'wallet_move', originType: null }, 'payout'],
    [{ code: 'collection_credit', sourceType: 'inbound_credit', originType: null }, 'credit'],
    [{ code: 'unmatched_credit', sourceType: 'inbound_credit', originType: null }, 'unmatched'],
    [{ code: 'escrow_disbursement_to_float', sourceType: 'escrow', originType: null }, 'escrow'],
    [{ code: 'settlement_to_float', sourceType: 'settlement', originType: null }, 'settlement'],
    [{ code: 'something_new', sourceType: 'refund', originType: null }, 'refund'],
    [{ code: 'something_new', sourceType: null, originType: null }, 'other'],
  ])('%j → %s', (facts, cause) => {
    expect(causeOf(facts)).toBe(cause)
  })
})
