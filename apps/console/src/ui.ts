// A few DOM helpers, so views read as the markup they make: elements with attributes and children, an error box with
// the envelope's message and request id, and a loading state with its spinner text for screen readers.
import { ApiError } from './api.ts'

type Child = Node | string | number | null | undefined | false
type Attributes = Record<string, string | number | boolean | EventListener | undefined>

/** An element: `on…` attributes are listeners, `true` is a bare attribute, `false`/undefined are left out. */
export function h<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[Tag] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value)
    else if (value === true) element.setAttribute(name, '')
    else element.setAttribute(name, String(value))
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    element.append(typeof child === 'number' ? String(child) : child)
  }
  return element
}

/** Replaces what `container` shows. */
export function show(container: Element, ...children: Child[]): void {
  container.replaceChildren(
    ...children
      .filter((child): child is Node | string => child !== null && child !== undefined && child !== false)
      .map((child) => (typeof child === 'number' ? String(child) : child)),
  )
}

/** A failure as the user sees it: the message, and the request id to quote to an operator. */
export function errorBox(error: unknown): HTMLElement {
  const message = error instanceof Error ? error.message : String(error)
  const requestId = error instanceof ApiError ? error.requestId : undefined
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('strong', {}, message),
    requestId ? h('small', {}, ` request id ${requestId}`) : null,
  )
}

/** A view's panel: a section named by its heading (h1, whose id is `${name}-title`), then its content. */
export function panel(name: string, title: string, ...children: Child[]): HTMLElement {
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': `${name}-title` },
    h('h1', { id: `${name}-title` }, title),
    ...children,
  )
}

/**
 * Marks the row whose attributes have the values of `match` ({ 'data-topic': topic }) as the current one
 * (aria-current), and no other in `container`.
 */
export function markCurrent(container: Element, match: Record<string, string>): void {
  const attributes = Object.entries(match)
  for (const row of container.querySelectorAll('tr')) {
    if (attributes.length > 0 && attributes.every(([name, value]) => row.getAttribute(name) === value))
      row.setAttribute('aria-current', 'true')
    else row.removeAttribute('aria-current')
  }
}

/** A data table: its caption, its column headers and its rows (each a `tr`, its first cell a `th` where it names the row). */
export function dataTable(
  className: string,
  caption: string,
  columns: string[],
  rows: HTMLTableRowElement[],
): HTMLTableElement {
  return h(
    'table',
    { class: className },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
    h('tbody', {}, ...rows),
  )
}

/** A moment as a `<time>` element: machine-readable, shown in the reader's locale. */
export const timeOf = (timestamp: string): HTMLTimeElement =>
  h('time', { datetime: timestamp }, new Date(timestamp).toLocaleString())

export const loading = (what: string): HTMLElement =>
  h('p', { class: 'loading', role: 'status', 'aria-live': 'polite' }, `Loading ${what}…`)

/** A form's submit listener: the page stays where it is, and `work` runs as busy() runs it. */
export function submitWith(button: HTMLButtonElement, errors: Element, work: () => Promise<unknown>) {
  return (event: Event): void => {
    event.preventDefault()
    void busy(button, errors, work)
  }
}

/** Runs `work` with `button` disabled and marked busy; shows a failure in `errors`. */
export async function busy<T>(
  button: HTMLButtonElement,
  errors: Element,
  work: () => Promise<T>,
): Promise<T | undefined> {
  button.disabled = true
  button.setAttribute('aria-busy', 'true')
  show(errors)
  try {
    return await work()
  } catch (error) {
    show(errors, errorBox(error))
    return undefined
  } finally {
    button.disabled = false
    button.removeAttribute('aria-busy')
  }
}
