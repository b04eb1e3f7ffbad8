// bench:latency's figures: what one run measured, printed side by side per operation (one column
// per steady rate, bench/table.ts) with the yardsticks at the same rates and Rail's p99 over
// theirs, and written to bench/results/latency.json.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { StepOutcome } from './latency-load.ts'
import type { HistogramStep, ServerStep } from './latency-server.ts'
import type { PgbenchStep } from './pgbench-ladder.ts'
import { printSideBySide } from './table.ts'

/** One open-loop step against Rail or the ceiling: the generator's figures, the CPU per request and the server's. */
export interface StepFigures extends StepOutcome {
  ratePerS: number
  connections: number
  /** CPU ms per answered request: the server's process (Rail with its sandbox bank, or the ceiling's two servers), PostgreSQL's, the generator's, all. */
  cpuMsPerRequest: { server: number; postgres: number; postgresBackends: number; generator: number; total: number }
  /** From Rail's /metrics; undefined for the ceiling. */
  server: ServerStep | undefined
}

export interface OperationLadder {
  operation: string
  path: string
  saturationPerS: number | undefined
  steps: StepFigures[]
}

export interface LatencyRun {
  secondsPerStep: number
  wallets: number
  operations: OperationLadder[]
  ceiling: StepFigures[] | undefined
  pgbench: { version: string; scale: number; clients: number; steps: PgbenchStep[] } | { skipped: string } | undefined
  ledgerVerified: boolean
  measuredAt: string
  machine: string
}

const COLUMN_WIDTH = 13
type Row<F> = [label: string, value: (figures: F) => string]

const ms = (value: number | undefined) => (value === undefined ? '—' : value.toFixed(1))
const pair = (a: number | undefined, b: number | undefined) => `${ms(a)}/${ms(b)}`
const quantiles = (step: HistogramStep | undefined) => (step && step.count > 0 ? pair(step.p50Ms, step.p99Ms) : '—')
const ratio = (value: number, yardstick: number | undefined) =>
  yardstick === undefined || yardstick <= 0 ? '—' : `${(value / yardstick).toFixed(1)}×`

const LATENCY_ROWS: Row<{ achievedPerS: number } & Record<'p50Ms' | 'p90Ms' | 'p99Ms' | 'p999Ms' | 'maxMs', number>>[] =
  [
    ['achieved /s', (step) => step.achievedPerS.toFixed(1)],
    ['p50 ms', (step) => ms(step.p50Ms)],
    ['p90 ms', (step) => ms(step.p90Ms)],
    ['p99 ms', (step) => ms(step.p99Ms)],
    ['p99.9 ms', (step) => ms(step.p999Ms)],
    ['max ms', (step) => ms(step.maxMs)],
  ]

const GENERATOR_ROWS: Row<StepFigures>[] = [
  ['non-2xx (of them 503)', (step) => `${step.non2xx} (${step.unavailable503})`],
  ['no answer', (step) => String(step.failed)],
  ['generator faults: late / socket', (step) => `${step.lateSends} / ${step.waitedForSocket}`],
  ['generator loop delay p99/max ms', (step) => pair(step.generatorLoopDelayP99Ms, step.generatorLoopDelayMaxMs)],
]

/** Prints every operation's ladder beside the yardsticks, then the yardsticks' own. */
export function printLatencyRun(run: LatencyRun): void {
  const pgbenchSteps = run.pgbench && 'steps' in run.pgbench ? run.pgbench.steps : []
  const p99At = (steps: readonly { ratePerS: number; p99Ms: number }[], rate: number) =>
    steps.find((step) => step.ratePerS === rate)?.p99Ms
  for (const ladder of run.operations) {
    const saturation = ladder.saturationPerS === undefined ? 'not measured' : `${ladder.saturationPerS}/s`
    console.log(
      `\n${ladder.operation} (POST ${ladder.path}), saturating rate ${saturation}, ${run.secondsPerStep} s a step`,
    )
    const stages = [...new Set(ladder.steps.flatMap((step) => Object.keys(step.server?.stages ?? {})))]
    const pools = [...new Set(ladder.steps.flatMap((step) => Object.keys(step.server?.poolWait ?? {})))]
    printSideBySide(
      ladder.steps,
      (step) => `${step.ratePerS}/s`,
      [
        ...LATENCY_ROWS,
        ...GENERATOR_ROWS,
        ['CPU ms/req Rail process', (step) => step.cpuMsPerRequest.server.toFixed(2)],
        ['CPU ms/req PostgreSQL', (step) => step.cpuMsPerRequest.postgres.toFixed(2)],
        ['CPU ms/req generator', (step) => step.cpuMsPerRequest.generator.toFixed(2)],
        ['CPU ms/req all', (step) => step.cpuMsPerRequest.total.toFixed(2)],
        ['ceiling p99 ms', (step) => ms(p99At(run.ceiling ?? [], step.ratePerS))],
        ['p99 / ceiling p99', (step) => ratio(step.p99Ms, p99At(run.ceiling ?? [], step.ratePerS))],
        ['pgbench p99 ms', (step) => ms(p99At(pgbenchSteps, step.ratePerS))],
        ['p99 / pgbench p99', (step) => ratio(step.p99Ms, p99At(pgbenchSteps, step.ratePerS))],
        ['Rail-measured p50/p99 ms', (step) => quantiles(step.server?.http)],
        ['event loop p99/max ms', (step) => pair(step.server?.eventLoopP99Ms, step.server?.eventLoopMaxMs)],
        ['GC ms in the step', (step) => ms(step.server?.gcMs)],
        ...pools.map((pool): Row<StepFigures> => [
          `pool wait ${pool} p50/p99`,
          (s) => quantiles(s.server?.poolWait[pool]),
        ]),
        ...stages.map((stage): Row<StepFigures> => [
          `stage ${stage} p50/p99`,
          (s) => quantiles(s.server?.stages[stage]),
        ]),
      ],
      COLUMN_WIDTH,
    )
  }
  printYardsticks(run)
}

function printYardsticks(run: LatencyRun): void {
  if (run.ceiling) {
    console.log('\nthe ceiling: two signed HTTP hops in one process, no database (bench/wallets-ceiling.ts)')
    printSideBySide(
      run.ceiling,
      (step) => `${step.ratePerS}/s`,
      [
        ...LATENCY_ROWS,
        ...GENERATOR_ROWS,
        ['CPU ms/req both servers', (step) => step.cpuMsPerRequest.server.toFixed(2)],
        ['CPU ms/req generator', (step) => step.cpuMsPerRequest.generator.toFixed(2)],
        ['CPU ms/req all', (step) => step.cpuMsPerRequest.total.toFixed(2)],
      ],
      COLUMN_WIDTH,
    )
  }
  if (run.pgbench && 'skipped' in run.pgbench) console.log(`\npgbench: skipped (${run.pgbench.skipped})`)
  else if (run.pgbench) {
    const { version, scale, clients, steps } = run.pgbench
    console.log(
      `\n${version}: TPC-B at fixed rates, scale ${scale}, ${clients} clients, latency from the scheduled start`,
    )
    printSideBySide(
      steps,
      (step) => `${step.ratePerS}/s`,
      [
        ...LATENCY_ROWS,
        ['CPU ms/tx PostgreSQL', (step) => step.cpuMsPerRequest.postgres.toFixed(2)],
        ['CPU ms/tx pgbench', (step) => step.cpuMsPerRequest.generator.toFixed(2)],
        ['CPU ms/tx all', (step) => step.cpuMsPerRequest.total.toFixed(2)],
      ],
      COLUMN_WIDTH,
    )
  }
  console.log(`\nledger verified: ${run.ledgerVerified}`)
}

export function writeLatencyRun(run: LatencyRun): void {
  const file = path.join(import.meta.dirname, 'results', 'latency.json')
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`)
  console.log(`wrote ${path.relative(process.cwd(), file)}`)
}
