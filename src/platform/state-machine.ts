// One form for every state machine in Rail (docs/states.md): the states a column may hold and the
// moves between them, as a table. Repos derive their `WHERE status = ANY(allowed)` guards from it,
// and the database refuses any other change: migration 0036 holds the same table
// (state_transitions) and a trigger on each guarded column; test/platform/state-machines.test.ts
// proves the two tables are the same and walks every pair.

export interface MachineSpec<S extends string> {
  /** The machine's name in state_transitions. */
  name: string
  /** Where its state lives: the table and the column the database guards. */
  table: string
  column: string
  /** Every state (in the order docs list them) and the states it may move to; none: terminal. */
  next: Record<S, readonly S[]>
  /** A nullable column only: the states it may take when it was null (the machine starts on an existing row). */
  fromNull?: readonly S[]
}

export interface StateMachine<S extends string> {
  readonly name: string
  readonly table: string
  readonly column: string
  readonly states: readonly S[]
  readonly next: Readonly<Record<S, readonly S[]>>
  readonly fromNull: readonly S[]
  /** The states from which `next` may be reached (itself included only where the table says so). */
  from(next: S): S[]
  /** A terminal state moves nowhere: the database refuses every change of it. */
  isTerminal(state: S): boolean
  /** The terminal states, for SQL (`= ANY($n)`) rather than a list written by hand. */
  readonly terminal: readonly S[]
  /** The states that may still move. */
  readonly open: readonly S[]
  /** Every allowed move, as [from, to]; from is null for a start from a null column. */
  transitions(): [S | null, S][]
}

export function defineMachine<S extends string>(spec: MachineSpec<S>): StateMachine<S> {
  const states = Object.keys(spec.next) as S[]
  const fromNull = spec.fromNull ?? []
  for (const [from, targets] of Object.entries(spec.next) as [S, readonly S[]][]) {
    for (const to of targets)
      if (!states.includes(to)) throw new Error(`${spec.name}: ${from} → ${to}, an unknown state`)
  }
  return {
    name: spec.name,
    table: spec.table,
    column: spec.column,
    states,
    next: spec.next,
    fromNull,
    from: (next) => states.filter((from) => spec.next[from].includes(next)),
    isTerminal: (state) => spec.next[state].length === 0,
    terminal: states.filter((state) => spec.next[state].length === 0),
    open: states.filter((state) => spec.next[state].length > 0),
    transitions: () => [
      ...fromNull.map((to): [S | null, S] => [null, to]),
      ...states.flatMap((from) => spec.next[from].map((to): [S | null, S] => [from, to])),
    ],
  }
}
