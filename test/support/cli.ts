// Runs the real `rail` command in a child process.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const RAIL_BIN = fileURLToPath(new URL('../../bin/rail.js', import.meta.url))
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** `env` replaces these variables; a value of undefined removes one. */
export function runRail(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 60_000,
): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env }
  delete childEnv.DATABASE_URL
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[name]
    else childEnv[name] = value
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [RAIL_BIN, ...args],
      { env: childEnv, cwd: PROJECT_ROOT, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}
