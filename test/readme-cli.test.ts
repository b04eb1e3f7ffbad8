// The README's command table names every command and subcommand the `rail` CLI has (read from the
// CLI's own command tree, as `rail --help` lists it).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildProgram, summaryProgram } from '../src/cli-program.ts'
import { PROJECT_ROOT, runRail } from './support/cli.ts'

describe('the README command table', () => {
  it('lists every command and subcommand of the CLI', async () => {
    const table = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `npx rail '))
    const program = await buildProgram()
    expect(program.commands.map((command) => command.name())).toContain('serve')
    const missing: string[] = []
    for (const command of program.commands) {
      const rows = table.filter((row) => row.startsWith(`| \`npx rail ${command.name()}`))
      if (rows.length === 0) missing.push(command.name())
      // The first cell, split on unescaped pipes only ("rotate-secret\|rotate-api-key" is one cell).
      for (const sub of command.commands)
        if (!rows.some((row) => row.split(/(?<!\\)\|/)[1]!.includes(sub.name())))
          missing.push(`${command.name()} ${sub.name()}`)
    }
    expect(missing).toEqual([])
  })

  it('is the tree `rail --help` prints', async () => {
    const help = (await runRail(['--help'], {})).stdout
    for (const command of (await buildProgram()).commands)
      expect(help).toMatch(new RegExp(`^ {2}${command.name()}\\b`, 'm'))
  })

  it("`rail --help`, answered from the summaries without loading a command, is the full program's help", async () => {
    expect(summaryProgram().helpInformation()).toBe((await buildProgram()).helpInformation())
    const help = await runRail(['--help'], {})
    expect(help.stdout).toBe((await buildProgram()).helpInformation())
  })
})
