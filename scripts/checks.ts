// The static checks `npm test` runs before the suite: typecheck, lint, formatting and the module boundaries.
// They are independent and each keeps one core busy, so they run side by side; each one's output is
// printed whole when it ends, in a block under its name, and the run fails when any of them fails.
import { spawn } from 'node:child_process'

const CHECKS = ['typecheck', 'lint', 'format:check', 'depcheck']

interface Outcome {
  name: string
  code: number
  output: string
  elapsedMs: number
}

function runScript(name: string): Promise<Outcome> {
  const startedMs = performance.now()
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('close', (code) => resolve({ name, code: code ?? 1, output, elapsedMs: performance.now() - startedMs }))
  })
}

const outcomes = await Promise.all(
  CHECKS.map(async (name) => {
    const outcome = await runScript(name)
    const verdict = outcome.code === 0 ? 'ok' : `failed (exit ${outcome.code})`
    process.stdout.write(`> ${name}: ${verdict} in ${(outcome.elapsedMs / 1000).toFixed(1)} s\n${outcome.output}`)
    return outcome
  }),
)
process.exitCode = outcomes.every((outcome) => outcome.code === 0) ? 0 : 1
