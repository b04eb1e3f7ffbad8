// HTML with every interpolated value escaped unless it is already HTML built here. A tagged
// template (html`<p>${text}</p>`) makes escaping the default: a partner's text cannot reach a page
// unescaped by forgetting a call. Every attribute in the templates is double-quoted, so escaping
// & < > " ' is enough in text and attribute values alike (docs/decisions/0011-pages.md).

/** Markup that was built by `html` (its values escaped), safe to put in a page as it is. */
export class Html {
  readonly markup: string
  constructor(markup: string) {
    this.markup = markup
  }
  toString(): string {
    return this.markup
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character]!)
}

type Value = Html | string | number | null | undefined | false | readonly Value[]

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof Html) return value.markup
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

/** Builds markup from a template: the literal parts as written, every value escaped (Html as is). */
export function html(parts: TemplateStringsArray, ...values: Value[]): Html {
  let markup = parts[0]!
  values.forEach((value, index) => {
    markup += render(value) + parts[index + 1]!
  })
  return new Html(markup)
}

/**
 * The headers every page Rail serves carries: its Content-Security-Policy, never framed, no
 * sniffing, no referrer (a checkout token is in the URL), never cached (pages show live money).
 */
export function pageHeaders<R extends { header(name: string, value: string): R }>(
  reply: R,
  contentSecurityPolicy: string,
): R {
  return reply
    .header('Content-Security-Policy', contentSecurityPolicy)
    .header('X-Frame-Options', 'DENY')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'no-store')
}
