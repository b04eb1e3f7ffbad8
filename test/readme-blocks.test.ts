// A newcomer's first hour: every ```sh and ```ts block of README.md runs as written, in order,
// against a started `rail serve`. The server's data directory is the `.rail/` of a throw-away
// folder inside the repository, whose `scripts` is the repository's, and the blocks run from
// that folder with no PORT, RAIL_URL or RAIL_DATA_DIR: so they find the server and its sandbox
// partner exactly as they do beside `npm start` in a clone (`.rail/…`, `scripts/rail-curl.sh`,
// `npx rail …`), on a free port instead of 8080. sh blocks run one by one through bash; the ts
// blocks are one program (later blocks use earlier names), written to first-steps.ts and run with
// `npx node first-steps.ts`, as the README says. A block that cannot run here is marked
// `<!-- not run: reason -->` on the line before it; every other block runs.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findFreePort } from '../src/platform/embedded-db.ts'
import { PROJECT_ROOT, RAIL_BIN } from './support/cli.ts'
import { waitFor } from './support/wait.ts'

interface Block {
  language: 'sh' | 'ts'
  code: string
  line: number
  notRun: string | undefined
}

/** The sh and ts blocks of a Markdown text, each with the reason it is not run when one is marked. */
function readmeBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  for (let index = 0; index < lines.length; index++) {
    const opening = /^```(\w*)\s*$/.exec(lines[index]!)
    if (!opening) continue
    const end = lines.indexOf('```', index + 1)
    if (end === -1) throw new Error(`README.md:${index + 1}: a code block that is never closed`)
    const language = opening[1]
    const marker = /^<!-- not run: (.+) -->$/.exec(lines[index - 1] ?? '')
    if (language === 'sh' || language === 'ts')
      blocks.push({ language, code: lines.slice(index + 1, end).join('\n'), line: index + 1, notRun: marker?.[1] })
    index = end
  }
  return blocks
}

interface Finished {
  code: number
  stdout: string
  stderr: string
}

/** Runs a program in the newcomer's folder, as a newcomer's shell would: no Rail variables of the test's. */
function runThere(command: string, args: string[], timeoutMs: number): Promise<Finished> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DATABASE_URL', 'RAIL_DATA_DIR', 'RAIL_URL', 'PORT', 'RAIL_MASTER_KEY', 'PUBLIC_URL'])
    delete env[name]
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: workDir, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      },
    )
  })
}

const README = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8')
let workDir: string
let server: ChildProcess | undefined
let serverExited: Promise<unknown> | undefined
let serverOutput = ''
let baseUrl: string

beforeAll(async () => {
  // Inside the repository, so that first-steps.ts imports `@rail/sdk` from its node_modules as a file in a clone does.
  mkdirSync(path.join(PROJECT_ROOT, '.vitest-tmp'), { recursive: true })
  workDir = mkdtempSync(path.join(PROJECT_ROOT, '.vitest-tmp', 'readme-'))
  chmodSync(workDir, 0o755) // as root, embedded PostgreSQL runs as the postgres user and must enter it
  symlinkSync(path.join(PROJECT_ROOT, 'scripts'), path.join(workDir, 'scripts'))
  const port = await findFreePort()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RAIL_DATA_DIR: path.join(workDir, '.rail'),
    PORT: String(port),
    LOG_FORMAT: 'text',
  }
  delete env.DATABASE_URL
  delete env.RAIL_MASTER_KEY
  server = spawn(process.execPath, [RAIL_BIN, 'serve'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  server.stdout!.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()))
  server.stderr!.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()))
  serverExited = new Promise((resolve) => server!.once('exit', resolve))
  await waitFor(
    () => serverOutput.includes('Stop with Ctrl-C.') || server!.exitCode !== null,
    60_000,
    'rail serve started',
  )
  if (server.exitCode !== null) throw new Error(`rail serve exited:\n${serverOutput}`)
  baseUrl = `http://127.0.0.1:${port}`
}, 240_000)

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM')
    await serverExited
  }
  if (workDir) rmSync(workDir, { recursive: true, force: true })
})

describe('README.md, run as written', () => {
  it('marks with a reason every block it does not run, and runs the others', () => {
    const blocks = readmeBlocks(README)
    const notRun = blocks.filter((block) => block.notRun !== undefined)
    // `npm install && npm start` and `npm test` (the quick start), and the callback receiver that runs until stopped.
    expect(notRun.map((block) => block.code)).toEqual([
      'npm install && npm start',
      'npm test',
      expect.stringContaining('verifyWebhook('),
    ])
    expect(
      blocks.filter((block) => block.language === 'sh' && block.notRun === undefined).length,
    ).toBeGreaterThanOrEqual(2)
    expect(
      blocks.filter((block) => block.language === 'ts' && block.notRun === undefined).length,
    ).toBeGreaterThanOrEqual(6)
  })

  it('every sh and ts block succeeds, in order, against a started `rail serve`', { timeout: 300_000 }, async () => {
    const blocks = readmeBlocks(README).filter((block) => block.notRun === undefined)
    const program = blocks.filter((block) => block.language === 'ts')
    const lastTs = blocks.lastIndexOf(program.at(-1)!)
    for (const [index, block] of blocks.entries()) {
      if (block.language === 'sh') {
        const ran = await runThere('bash', ['-euo', 'pipefail', '-c', block.code], 120_000)
        expect(ran.code, `README.md:${block.line} (sh) failed:\n${block.code}\n${ran.stdout}\n${ran.stderr}`).toBe(0)
      } else if (index === lastTs) {
        writeFileSync(
          path.join(workDir, 'first-steps.ts'),
          program.map((part) => `// README.md:${part.line}\n${part.code}\n`).join('\n'),
        )
        const ran = await runThere('npx', ['node', 'first-steps.ts'], 240_000)
        expect(
          ran.code,
          `the README's TypeScript (README.md:${program[0]!.line}–) failed:\n${ran.stdout}\n${ran.stderr}`,
        ).toBe(0)
      }
    }
  })

  it(
    "its TypeScript, the blocks not run included, type-checks against the SDK as a partner's editor checks it",
    { timeout: 120_000 },
    async () => {
      const blocks = readmeBlocks(README).filter((block) => block.language === 'ts')
      writeFileSync(
        path.join(workDir, 'readme-typed.ts'),
        `${blocks.map((block) => `// README.md:${block.line}\n${block.code}\n`).join('\n')}\nexport {}\n`,
      )
      writeFileSync(
        path.join(workDir, 'tsconfig.json'),
        JSON.stringify({ extends: '../../tsconfig.json', include: ['readme-typed.ts'] }),
      )
      const checked = await runThere(
        process.execPath,
        [path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json'],
        110_000,
      )
      expect(checked.code, checked.stdout + checked.stderr).toBe(0)
    },
  )

  it(
    '`npx rail dashboard link` gives a link to the running server, for its sandbox partner',
    { timeout: 120_000 },
    async () => {
      const ran = await runThere('npx', ['rail', 'dashboard', 'link'], 90_000)
      expect(ran.code, ran.stderr).toBe(0)
      const link = ran.stdout.trim()
      expect(link.startsWith(`${baseUrl}/dashboard/`), link).toBe(true)
      const page = await fetch(link)
      expect(page.status).toBe(200)
      const partnerId = (
        JSON.parse(readFileSync(path.join(workDir, '.rail', 'sandbox-partner.json'), 'utf8')) as { partnerId: string }
      ).partnerId
      const listed = await runThere('npx', ['rail', 'dashboard', 'link', '--partner', partnerId], 90_000)
      expect(listed.stdout.trim().startsWith(`${baseUrl}/dashboard/`), listed.stdout + listed.stderr).toBe(true)
    },
  )
})
