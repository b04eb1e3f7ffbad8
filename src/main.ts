// The `rail` command (commands in src/cli-program.ts). Failures print one line (`rail: <reason>`)
// and exit non-zero; stack traces only with DEBUG=rail. Nothing but the command line parser is
// loaded before a command is named (`rail --help` answers at once; src/cli-program.ts).
import { programFor } from './cli-program.ts'

try {
  await (await programFor(process.argv)).parseAsync(process.argv)
} catch (error) {
  console.error(`rail: ${cliMessage(error)}`)
  if (process.env.DEBUG === 'rail' && error instanceof Error && !(await isConfigError(error)))
    console.error(error.stack)
  process.exit(1)
}

/** A configuration error is a sentence for its user: no stack even under DEBUG. */
async function isConfigError(error: Error): Promise<boolean> {
  const { ConfigError } = await import('./platform/config.ts')
  return error instanceof ConfigError
}

/**
 * What a failed command tells its user. A value PostgreSQL could not read as its column's type (an
 * id that is not a UUID, say) is named as such, not as the database's own sentence.
 */
function cliMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  const unreadable = code === '22P02' ? /^invalid input syntax for type (\w+): "(.*)"$/s.exec(message) : null
  if (unreadable)
    return `${JSON.stringify(unreadable[2])} is not a valid ${unreadable[1] === 'uuid' ? 'id (ids are UUIDs)' : unreadable[1]}`
  return message
}
