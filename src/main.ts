// The `rail` command (commands in src/cli-program.ts). Failures print one line (`rail: <reason>`)
// and exit non-zero; stack traces only with DEBUG=rail.
import { buildProgram } from './cli-program.ts'
import { ConfigError } from './platform/config.ts'

try {
  await buildProgram().parseAsync(process.argv)
} catch (error) {
  console.error(`rail: ${cliMessage(error)}`)
  if (process.env.DEBUG === 'rail' && error instanceof Error && !(error instanceof ConfigError)) console.error(error.stack)
  process.exit(1)
}

/**
 * What a failed command tells its user. A value PostgreSQL could not read as its column's type (an
 * id that is not a UUID, say) is named as such, not as the database's own sentence.
 */
function cliMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  const unreadable = code === '22P02' ? /^invalid input syntax for type (\w+): "(.*)"$/s.exec(message) : null
  if (unreadable) return `${JSON.stringify(unreadable[2])} is not a valid ${unreadable[1] === 'uuid' ? 'id (ids are UUIDs)' : unreadable[1]}`
  return message
}
