// Where Rail is when `new Rail()` is given no `baseUrl`: RAIL_URL, else the `rail serve` (`npm
// start`) running on this machine, found as `npx rail listen` and scripts/rail-curl.sh find it: it
// records its address in its data directory's runtime.json (RAIL_DATA_DIR, default `.rail` in the
// current directory) while it runs. Node only, as the rest of the SDK.
import { readFileSync } from 'node:fs'
import path from 'node:path'

/** The address of the local Rail, or a TypeError saying how to give one. */
export function localBaseUrl(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  if (env['RAIL_URL']) return env['RAIL_URL']
  const file = path.resolve(cwd, env['RAIL_DATA_DIR'] || '.rail', 'runtime.json')
  const running = runningApiUrl(file)
  if (running !== undefined) return running
  throw new TypeError(
    `new Rail() needs a baseUrl: none was given, RAIL_URL is not set, and no running \`npm start\` has recorded its address in ${file}`,
  )
}

/** The address a live `rail serve` recorded; none when the file is missing or its process is gone (killed without cleaning up). */
function runningApiUrl(file: string): string | undefined {
  let recorded: { pid?: unknown; apiUrl?: unknown }
  try {
    recorded = JSON.parse(readFileSync(file, 'utf8')) as typeof recorded
  } catch {
    return undefined
  }
  if (typeof recorded.apiUrl !== 'string' || typeof recorded.pid !== 'number' || !isAlive(recorded.pid))
    return undefined
  return recorded.apiUrl
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
