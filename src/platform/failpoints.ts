// Failpoints: named places in the code where a test makes a process fail, stop or wait, so that
// every boundary of a multi-step operation can be crossed by a fault for real (as FreeBSD's
// fail(9) and TiKV's fail-rs do). Off unless a test turns one on, in-process (setFailpoint) or in
// a child process through RAIL_FAILPOINTS (`name=throw`, `name=hang`, or `name=stop`: the process
// stops itself with SIGSTOP, as a paused VM would, and goes on where it was when sent SIGCONT;
// comma-separated). Each costs a map look-up when off.

/** What a failpoint does when reached; a function may throw, wait, or do nothing. */
export type FailpointAction = 'throw' | 'hang' | 'stop' | ((context: FailpointContext) => void | Promise<void>)

export interface FailpointContext {
  /** The object the code is working on (e.g. a bank instruction's id). */
  id: string
}

const active = new Map<string, FailpointAction>()

export class FailpointError extends Error {}

export function setFailpoint(name: string, action: FailpointAction): void {
  active.set(name, action)
}

export function clearFailpoint(name: string): void {
  active.delete(name)
}

/** Turns on the failpoints a RAIL_FAILPOINTS value names; refuses anything else. */
export function loadFailpoints(spec: string | undefined): void {
  if (!spec) return
  for (const entry of spec
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [name, action] = entry.split('=')
    if (!name || (action !== 'throw' && action !== 'hang' && action !== 'stop'))
      throw new Error(`RAIL_FAILPOINTS: "${entry}" is not name=throw, name=hang or name=stop`)
    setFailpoint(name, action)
  }
}

export async function failpoint(name: string, context: FailpointContext): Promise<void> {
  const action = active.get(name)
  if (action === undefined) return
  if (action === 'throw') throw new FailpointError(`failpoint ${name} (${context.id})`)
  if (action === 'hang') return new Promise(() => {}) // until the process is killed
  if (action === 'stop') {
    process.kill(process.pid, 'SIGSTOP') // the whole process stands still here until SIGCONT
    return
  }
  await action(context)
}
