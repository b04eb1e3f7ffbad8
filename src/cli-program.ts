// The `rail` command: serve | api | worker | cluster | migrate | schema-dump | partner … |
// provider … | ledger … | sandbox … | outbound … | payments … | dashboard … | listen.
// Loading the commands in full (src/cli-commands.ts) loads every feature they reach: seconds of
// work on a cold start. So `rail --help` (or no command, or one that does not exist) is answered
// from the summaries below alone, and only a command named loads them; test/readme-cli.test.ts
// checks that both print the same help.
import { Command, Help } from 'commander'

const PROGRAM_DESCRIPTION = 'Rail: payments rail for Nigerian partners'

/** Each top-level command as `rail --help` lists it: its name with its usage, and what it does. */
export const COMMAND_SUMMARIES: readonly { term: string; description: string }[] = [
  {
    term: 'serve',
    description:
      'migrate, then run the API, the workers and the sandbox bank in one process (embedded PostgreSQL unless DATABASE_URL is set)',
  },
  { term: 'api', description: 'run the HTTP API only (production; needs DATABASE_URL, run `rail migrate` first)' },
  { term: 'worker', description: 'run background workers only (production; needs DATABASE_URL)' },
  { term: 'migrate', description: 'apply pending database migrations' },
  { term: 'schema-dump [options]', description: 'write db/schema.sql from a freshly migrated database (development)' },
  {
    term: 'partner|partners',
    description: 'manage partners, their credentials and the providers their money goes through',
  },
  { term: 'ledger', description: 'inspect the ledger' },
  { term: 'provider', description: 'banking providers and their approved capabilities' },
  { term: 'sandbox', description: 'sandbox conveniences' },
  { term: 'outbound', description: 'operate outbound transfers' },
  { term: 'payments', description: 'operate the payment pipeline (wallet moves, outbound transfers, refunds)' },
  { term: 'dashboard', description: "the partner dashboard's sign-in" },
  {
    term: 'listen [options]',
    description:
      "forward the partner's events to a local URL, signed as real deliveries (sandbox callbacks on a laptop)",
  },
  {
    term: 'cluster [options]',
    description:
      'run N `rail api` and M `rail worker` processes on one PostgreSQL (embedded unless DATABASE_URL is set) behind one port, with one master key and one sandbox bank; Ctrl-C stops all',
  },
]

/** Every name a command answers to (its aliases after `|`). */
const COMMAND_NAMES = new Set(COMMAND_SUMMARIES.flatMap(({ term }) => term.split(' ')[0]!.split('|')))

function newProgram(): Command {
  return new Command('rail').description(PROGRAM_DESCRIPTION).showHelpAfterError()
}

/** Every command of `rail` in full, ready to parse. */
export async function buildProgram(): Promise<Command> {
  const program = newProgram()
  const { registerAllCommands } = await import('./cli-commands.ts')
  registerAllCommands(program)
  return program
}

/** The top-level commands as summaries only: enough to print `rail --help` and refuse an unknown command. */
export function summaryProgram(): Command {
  const program = newProgram()
  const terms = new Map<string, string>()
  for (const { term, description } of COMMAND_SUMMARIES) {
    const [name, ...aliases] = term.split(' ')[0]!.split('|')
    terms.set(name!, term)
    const command = program.command(name!).description(description)
    for (const alias of aliases) command.alias(alias)
  }
  const standard = new Help()
  program.configureHelp({ subcommandTerm: (command) => terms.get(command.name()) ?? standard.subcommandTerm(command) })
  return program
}

/** The program that answers these arguments (`process.argv`): the full one when they name a command (or `help <command>`). */
export async function programFor(argv: readonly string[]): Promise<Command> {
  const [first, second] = argv.slice(2)
  const named = first === 'help' ? second : first
  return named !== undefined && COMMAND_NAMES.has(named) ? buildProgram() : summaryProgram()
}
