// Cursor lists: `{ data: [...], nextCursor }`, newest first; the next page is asked for with
// `cursor` = the previous page's `nextCursor`, until it is null.

export interface Page<Item> {
  data: Item[]
  nextCursor: string | null
}

/**
 * What a list method answers. `await` it for the first page (as asked: `limit`, `cursor`,
 * filters), or `for await` over it for every item of every page, fetched as they are needed;
 * `.pages()` gives the pages themselves.
 */
export class ListCall<Item, P extends Page<Item> = Page<Item>> implements PromiseLike<P>, AsyncIterable<Item> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<P>
  readonly #firstCursor: string | undefined
  #firstPage: Promise<P> | undefined

  constructor(fetchPage: (cursor: string | undefined) => Promise<P>, firstCursor: string | undefined) {
    this.#fetchPage = fetchPage
    this.#firstCursor = firstCursor
  }

  #first(): Promise<P> {
    this.#firstPage ??= this.#fetchPage(this.#firstCursor)
    return this.#firstPage
  }

  then<Fulfilled = P, Rejected = never>(
    onFulfilled?: ((page: P) => Fulfilled | PromiseLike<Fulfilled>) | null,
    onRejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<Fulfilled | Rejected> {
    return this.#first().then(onFulfilled, onRejected)
  }

  async *pages(): AsyncGenerator<P, void, undefined> {
    let page = await this.#first()
    yield page
    while (page.nextCursor !== null && page.nextCursor !== undefined) {
      page = await this.#fetchPage(page.nextCursor)
      yield page
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.data
  }

  /** Every item of every page, in one array: for lists known to be small. */
  async toArray(): Promise<Item[]> {
    const items: Item[] = []
    for await (const item of this) items.push(item)
    return items
  }
}
