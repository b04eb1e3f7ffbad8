// The cluster's processes: each API and worker is a slot that Node's cluster module forks as a
// real `rail api` or `rail worker`. API processes all listen on the cluster's one port, which the
// primary holds and hands connections round-robin; a process that dies is started again.
import cluster, { type Worker } from 'node:cluster'
import readline from 'node:readline'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'

const RAIL_BIN = fileURLToPath(new URL('../../bin/rail.js', import.meta.url))
/** A slot whose process dies this many times in a row before it listened is broken (a bad setting, a port in use): the cluster stops. */
const FAILED_STARTS_LIMIT = 3

export type Role = 'api' | 'worker'

export interface Slot {
  role: Role
  /** 1-based within its role, for humans: api 1, api 2, worker 1… */
  index: number
  env: NodeJS.ProcessEnv
  worker: Worker | undefined
  /** Processes started in this slot so far (the first is 1). */
  starts: number
  failedStarts: number
}

export interface SlotEvents {
  /** A line a process printed, already prefixed with its slot. */
  output(line: string): void
  /** The cluster cannot go on (a slot keeps failing to start). */
  fatal(reason: string): void
}

/** The processes of the cluster, forked and started again until `stopAll`. */
export class ClusterProcesses {
  readonly slots: Slot[] = []
  private stopping = false
  private readonly events: SlotEvents

  constructor(events: SlotEvents) {
    this.events = events
    // Every process's output comes through the primary, so that each line can say whose it is.
    cluster.setupPrimary({ exec: RAIL_BIN, silent: true })
  }

  add(role: Role, env: NodeJS.ProcessEnv): Slot {
    const slot: Slot = {
      role,
      index: this.slots.filter((s) => s.role === role).length + 1,
      env,
      worker: undefined,
      starts: 0,
      failedStarts: 0,
    }
    this.slots.push(slot)
    return slot
  }

  /** Forks the slot's process; resolves once it listens (the API port, or a worker's own endpoints). */
  start(slot: Slot): Promise<void> {
    // setupPrimary applies to the next fork only as far as it is called before it: set the role's arguments now.
    cluster.setupPrimary({ exec: RAIL_BIN, args: [slot.role], silent: true })
    const worker = cluster.fork(slot.env)
    slot.worker = worker
    slot.starts++
    const name = slotName(slot)
    relayLines(worker.process.stdout, name, this.events.output)
    relayLines(worker.process.stderr, name, this.events.output)
    this.events.output(`rail cluster: ${name} started (pid ${worker.process.pid})`)
    let listened = false
    const listening = new Promise<void>((resolve, reject) => {
      worker.once('listening', () => {
        listened = true
        slot.failedStarts = 0
        resolve()
      })
      worker.once('exit', (code, signal) => {
        if (!listened) reject(new Error(`${name} exited before it listened (${signal ?? `status ${code}`})`))
      })
    })
    worker.once('exit', (code, signal) => this.onExit(slot, worker, listened, signal ?? `status ${code}`))
    return listening
  }

  private onExit(slot: Slot, worker: Worker, listened: boolean, how: string): void {
    if (slot.worker === worker) slot.worker = undefined
    if (this.stopping) return
    const name = slotName(slot)
    slot.failedStarts = listened ? 0 : slot.failedStarts + 1
    if (slot.failedStarts >= FAILED_STARTS_LIMIT) {
      this.events.fatal(
        `${name} failed to start ${FAILED_STARTS_LIMIT} times in a row (last: ${how}); see its output above`,
      )
      return
    }
    this.events.output(`rail cluster: ${name} (pid ${worker.process.pid}) exited (${how}); starting it again`)
    // A start that fails again is reported by the next exit; nothing to wait for here.
    this.start(slot).catch(() => {})
  }

  /** Asks every process to drain and stop (SIGTERM), or kills them (SIGKILL); resolves when all have exited. */
  async stopAll(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    this.stopping = true
    const running = this.slots.flatMap((slot) => (slot.worker && !slot.worker.isDead() ? [slot.worker] : []))
    await Promise.all(
      running.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve()
            worker.once('exit', () => resolve())
            worker.process.kill(signal)
          }),
      ),
    )
  }

  /** Kills every process at once (a second Ctrl-C); `stopAll` is still waiting for them. */
  killAll(): void {
    this.stopping = true
    for (const slot of this.slots) if (slot.worker && !slot.worker.isDead()) slot.worker.process.kill('SIGKILL')
  }
}

export function slotName(slot: Pick<Slot, 'role' | 'index'>): string {
  return `${slot.role} ${slot.index}`
}

function relayLines(stream: Readable | null, name: string, output: (line: string) => void): void {
  if (!stream) return
  const prefix = `[${name}] `
  readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => output(prefix + line))
}
