// HTML with its interpolations escaped: `html` is a tagged template whose values are text (escaped: & < > " ') unless
// they are SafeHtml themselves (another html`…`, or a list of them). No template engine: a mail is a few paragraphs
// and a table, and nothing a producer or a customer wrote can open a tag or leave an attribute.

/** Markup that is safe to put in a page as it is: built by `html`, never from a plain string. */
export class SafeHtml {
  readonly #markup: string
  constructor(markup: string) {
    this.#markup = markup
  }
  toString(): string {
    return this.#markup
  }
}

/** What may stand in an html`…` interpolation: text and numbers (escaped), SafeHtml (as it is), lists of either. */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[]

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Text as HTML that shows it: the five characters that mean something in markup or in an attribute, escaped. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => entities[character] ?? '')

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.toString()
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

/** The tagged template: html`<p>${name}</p>` escapes `name`; html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>` nests. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let markup = strings[0] ?? ''
  values.forEach((value, at) => {
    markup += render(value) + (strings[at + 1] ?? '')
  })
  return new SafeHtml(markup)
}
