// The benchmarks' side-by-side table: one column per measured set-up, one row per figure.

/** Prints `rows` (a label and how to read its figure) for each of `columns`, headed by their names. */
export function printSideBySide<F>(
  columns: readonly F[],
  nameOf: (figures: F) => string,
  rows: readonly [label: string, value: (figures: F) => string][],
  columnWidth: number,
): void {
  const width = Math.max(...rows.map(([label]) => label.length))
  console.log(`\n${''.padEnd(width)}  ${columns.map((figures) => nameOf(figures).padStart(columnWidth)).join('  ')}`)
  for (const [label, value] of rows)
    console.log(`${label.padEnd(width)}  ${columns.map((figures) => value(figures).padStart(columnWidth)).join('  ')}`)
}
