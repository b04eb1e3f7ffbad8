// A registry: how a module lets others plug in what it calls back, instead of the composition root
// handing it a table of callbacks. The module that calls declares the keys and their order; each
// product registers its own handler under its key, once, where it is plugged in. Handlers are
// called in the declared order whatever the order of registration, so that the rows they lock are
// locked in one order in every process.
export class Registry<K extends string, H> {
  readonly #handlers: Partial<Record<K, H>> = {}
  /** What is registered (for the error of a key registered twice or unknown). */
  readonly name: string
  /** Every key a handler may be registered under, in the order handlers are called. */
  readonly order: readonly K[]

  constructor(name: string, order: readonly K[]) {
    this.name = name
    this.order = order
  }

  /** Plugs a handler in; a key registered twice, or not declared, is a wiring error. */
  register(key: K, handler: H): void {
    if (!this.order.includes(key)) throw new Error(`${this.name}: no such key ${key}`)
    if (this.#handlers[key] !== undefined) throw new Error(`${this.name}: ${key} is registered twice`)
    this.#handlers[key] = handler
  }

  get(key: K): H | undefined {
    return this.#handlers[key]
  }

  /** The handlers by key (a live view: what is registered later shows too). */
  get handlers(): Readonly<Partial<Record<K, H>>> {
    return this.#handlers
  }

  /** The registered handlers, in the declared order. */
  registered(): [K, H][] {
    return this.order.flatMap((key): [K, H][] => {
      const handler = this.#handlers[key]
      return handler === undefined ? [] : [[key, handler]]
    })
  }
}
