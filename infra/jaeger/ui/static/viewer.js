// Meridian's trace view: a search and one trace as a waterfall, read from Jaeger's query API (/api/...).
// No framework and no build step: Jaeger serves this file as it is. Span attributes are untrusted, so everything is
// built with DOM APIs and textContent, never with HTML strings.

/** Rows drawn of one trace; a larger trace says how many were left out. */
const MAX_SPANS = 5000
/** Characters shown of one attribute value; the rest is left out with a note. */
const MAX_VALUE_CHARS = 1000
/** Bounds on the search form's input (Jaeger's own limits are looser). */
const MAX_TAGS = 20
const MAX_LIMIT = 1500
const LOOKBACKS = [
  ['15m', 'Last 15 minutes', 15 * 60],
  ['1h', 'Last hour', 3600],
  ['6h', 'Last 6 hours', 6 * 3600],
  ['24h', 'Last 24 hours', 24 * 3600],
  ['7d', 'Last 7 days', 7 * 24 * 3600],
]
/** One colour per service, in the order the services appear (the root's first). */
const PALETTE = [
  '#2f6fdf',
  '#e0822a',
  '#1f9d74',
  '#9157d6',
  '#d64c7b',
  '#1c9bb8',
  '#a4872a',
  '#5d6b82',
  '#c2452d',
  '#4f9a35',
]

const base = new URL(document.baseURI)
const main = document.getElementById('main')

/** An element with properties, attributes and children (strings become text nodes, never markup). */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') node.className = value
    else if (key === 'text') node.textContent = value
    else if (key === 'style') Object.assign(node.style, value)
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child)
  return node
}

/** A link inside the view: followed without a reload, and a real address on reload or in a new tab. */
function navLink(href, props, ...children) {
  return el('a', { ...props, href, 'data-nav': true }, ...children)
}

async function api(path) {
  const response = await fetch(new URL(`api/${path}`, base), { headers: { accept: 'application/json' } })
  let body
  try {
    body = await response.json()
  } catch {
    body = undefined
  }
  if (!response.ok) {
    const message = body?.errors?.[0]?.msg ?? `${response.status} ${response.statusText}`
    throw Object.assign(new Error(`Jaeger answered: ${message}`), { status: response.status })
  }
  return body?.data
}

// ---------------------------------------------------------------------------------------------- formatting

/** A duration given in microseconds, in the unit that reads best. */
function formatDuration(us) {
  if (us === 0) return '0'
  if (us < 1000) return `${Math.round(us)}µs`
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : us < 100_000 ? 1 : 0)}ms`
  if (us < 60_000_000) return `${(us / 1_000_000).toFixed(2)}s`
  return `${(us / 60_000_000).toFixed(1)}min`
}

/** A moment as local `YYYY-MM-DD HH:MM:SS.mmm`: the same in every browser locale, and sortable by eye. */
function formatTime(us) {
  const date = new Date(us / 1000)
  const two = (n) => String(n).padStart(2, '0')
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ` +
    `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`
  )
}

/** An attribute value as text, bounded; an elided value keeps its full length in the note. */
function valueText(value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  if (text === undefined) return ''
  if (text.length <= MAX_VALUE_CHARS) return text
  return `${text.slice(0, MAX_VALUE_CHARS)}… (${text.length.toLocaleString()} characters, the first ${MAX_VALUE_CHARS.toLocaleString()} shown)`
}

// ---------------------------------------------------------------------------------------------- a trace's model

const isError = (span) =>
  span.tags.some(
    (tag) =>
      (tag.key === 'error' && (tag.value === true || tag.value === 'true')) ||
      (tag.key === 'otel.status_code' && tag.value === 'ERROR'),
  )

/** A trace's spans in drawing order: each parent before its children (CHILD_OF), siblings by start time. */
function layoutTrace(trace) {
  const byId = new Map(trace.spans.map((span) => [span.spanID, span]))
  const children = new Map()
  const roots = []
  for (const span of trace.spans) {
    span.tags ??= []
    span.logs ??= []
    span.references ??= []
    const parent = span.references.find((ref) => ref.refType === 'CHILD_OF' && byId.has(ref.spanID))
    if (parent && parent.spanID !== span.spanID) {
      if (!children.has(parent.spanID)) children.set(parent.spanID, [])
      children.get(parent.spanID).push(span)
    } else roots.push(span)
  }
  const byStart = (a, b) => a.startTime - b.startTime
  roots.sort(byStart)
  for (const list of children.values()) list.sort(byStart)

  // depth first without recursion (a deep trace must not exhaust the stack); `seen` breaks reference cycles
  const rows = []
  const seen = new Set()
  const stack = roots.map((span) => ({ span, depth: 0 })).reverse()
  while (stack.length > 0) {
    const { span, depth } = stack.pop()
    if (seen.has(span.spanID)) continue
    seen.add(span.spanID)
    rows.push({ span, depth })
    const kids = children.get(span.spanID) ?? []
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ span: kids[i], depth: depth + 1 })
  }
  // spans only reachable through a cycle are still shown, at the top level
  for (const span of trace.spans) if (!seen.has(span.spanID)) rows.push({ span, depth: 0 })

  // a loop, not Math.min(...spans): spreading a large trace's spans as arguments overflows the stack
  let start = Number.POSITIVE_INFINITY
  let end = Number.NEGATIVE_INFINITY
  for (const span of trace.spans) {
    start = Math.min(start, span.startTime)
    end = Math.max(end, span.startTime + span.duration)
  }
  return { rows, roots, byId, start, end, duration: Math.max(end - start, 1) }
}

const serviceOf = (trace, span) => trace.processes?.[span.processID]?.serviceName ?? 'unknown'

/** Service → colour, in the order the rows show the services. */
function serviceColours(trace, rows) {
  const colours = new Map()
  for (const { span } of rows) {
    const service = serviceOf(trace, span)
    if (!colours.has(service)) colours.set(service, PALETTE[colours.size % PALETTE.length])
  }
  return colours
}

/** What the results list shows of one trace. */
function summarise(trace) {
  const spans = trace.spans ?? []
  const { roots, start, duration } = layoutTrace(trace)
  const root = roots[0] ?? spans[0]
  const services = new Map()
  for (const span of spans) {
    const service = serviceOf(trace, span)
    services.set(service, (services.get(service) ?? 0) + 1)
  }
  return {
    traceID: trace.traceID,
    rootService: root ? serviceOf(trace, root) : 'unknown',
    rootOperation: root?.operationName ?? '',
    spans: spans.length,
    errors: spans.filter(isError).length,
    services,
    start,
    duration,
  }
}

// ---------------------------------------------------------------------------------------------- search

/** `key=value` pairs separated by spaces (a value with spaces in double quotes) as Jaeger's tags JSON. */
function parseTags(text) {
  const tags = {}
  const pattern = /([^\s="]+)=(?:"([^"]*)"|(\S*))/gy
  const trimmed = text.trim()
  let count = 0
  let index = 0
  while (index < trimmed.length) {
    pattern.lastIndex = index
    const match = pattern.exec(trimmed)
    if (!match) throw new Error('Tags are key=value pairs separated by spaces, e.g. order.id=ord_123')
    count += 1
    if (count > MAX_TAGS) throw new Error(`At most ${MAX_TAGS} tags`)
    tags[match[1]] = match[2] ?? match[3]
    index = pattern.lastIndex
    while (trimmed[index] === ' ') index += 1
  }
  return tags
}

function searchForm(params, onServices) {
  const service = el('select', { id: 'service', name: 'service', required: true })
  const operation = el(
    'select',
    { id: 'operation', name: 'operation' },
    el('option', { value: '', text: 'all' }),
  )
  const tags = el('input', {
    id: 'tags',
    name: 'tags',
    maxlength: 1000,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'order.id=ord_123 http.response.status_code=500',
    value: params.get('tags') ?? '',
  })
  const lookback = el(
    'select',
    { id: 'lookback', name: 'lookback' },
    LOOKBACKS.map(([value, label]) => el('option', { value, text: label })),
  )
  lookback.value = LOOKBACKS.some(([value]) => value === params.get('lookback'))
    ? params.get('lookback')
    : '1h'
  const limit = el('input', {
    id: 'limit',
    name: 'limit',
    type: 'number',
    min: 1,
    max: MAX_LIMIT,
    value: params.get('limit') ?? '20',
  })

  async function loadOperations(name, selected) {
    operation.replaceChildren(el('option', { value: '', text: 'all' }))
    if (!name) return
    const operations = (await api(`services/${encodeURIComponent(name)}/operations`)) ?? []
    for (const op of [...operations].sort()) operation.append(el('option', { value: op, text: op }))
    operation.value = operations.includes(selected) ? selected : ''
  }
  service.addEventListener('change', () => loadOperations(service.value, '').catch(showError))

  const form = el(
    'form',
    {
      class: 'search-form',
      'aria-labelledby': 'search-heading',
      onsubmit: (event) => {
        event.preventDefault()
        const query = new URLSearchParams({ service: service.value })
        if (operation.value) query.set('operation', operation.value)
        if (tags.value.trim()) query.set('tags', tags.value.trim())
        query.set('lookback', lookback.value)
        query.set('limit', limit.value || '20')
        navigate(`search?${query}`)
      },
    },
    el('h2', { id: 'search-heading', text: 'Search' }),
    field('Service', service),
    field('Operation', operation),
    field('Tags', tags, 'key=value, space separated; a value with spaces in "double quotes"'),
    field('Lookback', lookback),
    field('Limit', limit),
    el('button', { type: 'submit', class: 'primary', text: 'Find traces' }),
  )

  api('services')
    .then(async (services) => {
      const names = [...(services ?? [])].sort()
      service.replaceChildren(
        el('option', { value: '', text: names.length ? 'choose a service' : 'no services yet' }),
        ...names.map((name) => el('option', { value: name, text: name })),
      )
      const wanted = params.get('service')
      if (wanted && !names.includes(wanted)) service.append(el('option', { value: wanted, text: wanted }))
      service.value = wanted ?? ''
      await loadOperations(service.value, params.get('operation') ?? '')
      onServices()
    })
    .catch(showError)
  return form
}

function field(label, control, hint) {
  const hintId = hint ? `${control.id}-hint` : undefined
  if (hintId) control.setAttribute('aria-describedby', hintId)
  return el(
    'div',
    { class: 'field' },
    el('label', { for: control.id, text: label }),
    control,
    hint ? el('p', { class: 'hint', id: hintId, text: hint }) : null,
  )
}

async function runSearch(params, results) {
  const service = params.get('service')
  if (!service) {
    results.replaceChildren(el('p', { class: 'empty', text: 'Choose a service and find its traces.' }))
    return
  }
  const tags = parseTags(params.get('tags') ?? '')
  const seconds = (LOOKBACKS.find(([value]) => value === params.get('lookback')) ?? LOOKBACKS[1])[2]
  const limit = Math.min(Math.max(Number.parseInt(params.get('limit') ?? '20', 10) || 20, 1), MAX_LIMIT)
  const endUs = Date.now() * 1000
  const query = new URLSearchParams({
    service,
    start: String(endUs - seconds * 1_000_000),
    end: String(endUs),
    limit: String(limit),
  })
  if (params.get('operation')) query.set('operation', params.get('operation'))
  if (Object.keys(tags).length > 0) query.set('tags', JSON.stringify(tags))

  results.replaceChildren(el('p', { class: 'status', role: 'status', text: 'Searching…' }))
  const traces = ((await api(`traces?${query}`)) ?? []).map(summarise)
  traces.sort((a, b) => b.start - a.start)
  const longest = Math.max(1, ...traces.map((trace) => trace.duration))
  results.replaceChildren(
    el(
      'h2',
      { id: 'results-heading' },
      `${traces.length} ${traces.length === 1 ? 'trace' : 'traces'}`,
      el('span', { class: 'muted', text: ` · ${service}` }),
    ),
    traces.length === 0
      ? el('p', { class: 'empty', text: 'No trace matches: widen the lookback or drop a tag.' })
      : el(
          'ol',
          { class: 'trace-list', 'aria-labelledby': 'results-heading' },
          traces.map((trace) => traceItem(trace, longest)),
        ),
  )
}

function traceItem(trace, longest) {
  return el(
    'li',
    { class: 'trace-item', 'data-trace-id': trace.traceID },
    navLink(
      `trace/${trace.traceID}`,
      { class: 'trace-link' },
      el(
        'span',
        { class: 'trace-title' },
        el('strong', { text: trace.rootService }),
        `: ${trace.rootOperation}`,
      ),
      el('span', { class: 'trace-duration', text: formatDuration(trace.duration) }),
    ),
    el(
      'div',
      { class: 'trace-meter', 'aria-hidden': 'true' },
      el('span', { style: { width: `${Math.max((trace.duration / longest) * 100, 0.5)}%` } }),
    ),
    el(
      'p',
      { class: 'trace-facts' },
      el('span', { text: `${trace.spans} spans` }),
      trace.errors > 0
        ? el('span', {
            class: 'error-badge',
            text: `${trace.errors} ${trace.errors === 1 ? 'error' : 'errors'}`,
          })
        : null,
      el('span', { class: 'muted', text: formatTime(trace.start) }),
      el('span', { class: 'muted mono', text: trace.traceID }),
    ),
    el(
      'ul',
      { class: 'service-chips', 'aria-label': 'Services' },
      [...trace.services]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, count]) => el('li', { text: `${name} (${count})` })),
    ),
  )
}

function showSearch(params, view) {
  const results = el('section', { class: 'results', 'aria-live': 'polite' })
  let searched = false
  const search = () => {
    if (searched) return
    searched = true
    if (view !== currentView) return
    runSearch(params, results).catch((error) =>
      results.replaceChildren(el('p', { class: 'error-message', role: 'alert', text: error.message })),
    )
  }
  main.replaceChildren(
    el('h1', { class: 'visually-hidden', text: 'Find traces' }),
    el(
      'div',
      { class: 'search-page' },
      el('aside', { class: 'sidebar' }, searchForm(params, search)),
      results,
    ),
  )
  document.title = 'Search · Meridian traces'
}

// ---------------------------------------------------------------------------------------------- one trace

async function showTrace(traceId, view) {
  main.replaceChildren(el('p', { class: 'status', role: 'status', text: `Loading trace ${traceId}…` }))
  let trace
  try {
    ;[trace] = (await api(`traces/${encodeURIComponent(traceId)}`)) ?? []
  } catch (error) {
    // Jaeger answers 404 for a trace it does not hold
    if (view !== currentView) return
    if (error.status !== 404) {
      main.replaceChildren(
        el('h1', { text: 'Trace not loaded' }),
        el('p', { class: 'error-message', role: 'alert', text: error.message }),
        navLink('search', { text: 'Back to the search' }),
      )
      return
    }
  }
  // the reader moved on while the trace loaded
  if (view !== currentView) return
  if (!trace?.spans?.length) {
    main.replaceChildren(
      el('h1', { text: 'Trace not found' }),
      el('p', { text: `Jaeger holds no trace ${traceId}.` }),
      navLink('search', { text: 'Back to the search' }),
    )
    return
  }
  const layout = layoutTrace(trace)
  const colours = serviceColours(trace, layout.rows)
  const root = layout.roots[0] ?? trace.spans[0]
  const summary = summarise(trace)
  document.title = `${serviceOf(trace, root)}: ${root.operationName} · Meridian traces`

  main.replaceChildren(
    el(
      'header',
      { class: 'trace-header' },
      el(
        'h1',
        {},
        el('span', { class: 'swatch', style: { background: colours.get(serviceOf(trace, root)) } }),
        el('span', { text: `${serviceOf(trace, root)}: ${root.operationName}` }),
      ),
      el(
        'dl',
        { class: 'trace-stats' },
        stat('Trace', trace.traceID, 'mono'),
        stat('Started', formatTime(layout.start)),
        stat('Duration', formatDuration(layout.duration)),
        stat('Services', String(colours.size)),
        stat('Spans', String(trace.spans.length)),
        summary.errors > 0 ? stat('Errors', String(summary.errors), 'error-text') : null,
      ),
      el(
        'ul',
        { class: 'legend', 'aria-label': 'Services' },
        [...colours].map(([name, colour]) =>
          el('li', {}, el('span', { class: 'swatch', style: { background: colour } }), name),
        ),
      ),
    ),
    waterfall(trace, layout, colours),
  )
}

function stat(label, value, valueClass) {
  return el('div', {}, el('dt', { text: label }), el('dd', { class: valueClass, text: value }))
}

function waterfall(trace, layout, colours) {
  const shown = layout.rows.slice(0, MAX_SPANS)
  const ticks = [0, 0.25, 0.5, 0.75, 1]
  const list = el('ol', { class: 'waterfall-rows', 'aria-label': 'Spans, parents before their children' })
  for (const row of shown) list.append(spanRow(trace, layout, colours, row))
  return el(
    'section',
    { class: 'waterfall', 'aria-labelledby': 'waterfall-heading', 'data-drawn': true },
    el('h2', { id: 'waterfall-heading', class: 'visually-hidden', text: 'Spans' }),
    el(
      'div',
      { class: 'axis', 'aria-hidden': 'true' },
      el('div', { class: 'axis-name', text: 'Service and operation' }),
      el(
        'div',
        { class: 'axis-time' },
        ticks.map((tick) =>
          el('span', {
            class: 'tick',
            style: { left: `${tick * 100}%` },
            text: formatDuration(layout.duration * tick),
          }),
        ),
      ),
    ),
    list,
    layout.rows.length > shown.length
      ? el('p', {
          class: 'notice',
          role: 'note',
          text: `The first ${MAX_SPANS.toLocaleString()} of ${layout.rows.length.toLocaleString()} spans are drawn.`,
        })
      : null,
  )
}

function spanRow(trace, layout, colours, { span, depth }) {
  const service = serviceOf(trace, span)
  const colour = colours.get(service)
  const error = isError(span)
  const left = ((span.startTime - layout.start) / layout.duration) * 100
  const width = Math.max((span.duration / layout.duration) * 100, 0.15)
  const details = el('div', { class: 'span-details', id: `details-${span.spanID}`, hidden: true })
  const button = el(
    'button',
    {
      type: 'button',
      class: 'span-row',
      'aria-expanded': 'false',
      'aria-controls': details.id,
      onclick: () => {
        const open = button.getAttribute('aria-expanded') !== 'true'
        button.setAttribute('aria-expanded', String(open))
        details.hidden = !open
        if (open && details.childElementCount === 0) details.append(...spanDetails(trace, layout, span))
      },
    },
    el(
      'span',
      { class: 'span-name', style: { paddingLeft: `${Math.min(depth, 24) * 14 + 8}px` } },
      el('span', { class: 'swatch', style: { background: colour } }),
      el('span', { class: 'span-service', text: service }),
      el('span', { class: 'span-operation', text: span.operationName }),
      error ? el('span', { class: 'error-badge', text: 'error' }) : null,
    ),
    el(
      'span',
      { class: 'span-timeline' },
      el('span', {
        class: 'bar',
        style: { left: `${left}%`, width: `${width}%`, background: colour },
      }),
      el(
        'span',
        { class: `bar-label ${labelPlace(left, width)}`, style: labelStyle(left, width) },
        formatDuration(span.duration),
      ),
    ),
  )
  return el(
    'li',
    {
      class: error ? 'span error' : 'span',
      'data-span-id': span.spanID,
      'data-depth': depth,
      'data-service': service,
    },
    button,
    details,
  )
}

/** A bar's duration label goes after the bar, before it where the bar ends late, inside it where it spans the axis. */
function labelPlace(left, width) {
  if (left + width <= 75) return 'after'
  return left >= 12 ? 'before' : 'inside'
}

function labelStyle(left, width) {
  const place = labelPlace(left, width)
  if (place === 'after') return { left: `${left + width + 0.5}%` }
  if (place === 'before') return { right: `${100 - left + 0.5}%` }
  return { right: `${100 - left - width + 0.5}%` }
}

function spanDetails(trace, layout, span) {
  const process = trace.processes?.[span.processID]
  const facts = el(
    'dl',
    { class: 'span-facts' },
    stat('Span', span.spanID, 'mono'),
    stat('Starts at', `+${formatDuration(span.startTime - layout.start)}`),
    stat('Duration', formatDuration(span.duration)),
  )
  const sections = [
    facts,
    keyValues('Attributes', span.tags),
    keyValues('Resource', process?.tags ?? []),
    el(
      'section',
      {},
      el('h3', { text: `Events (${span.logs.length})` }),
      span.logs.length === 0
        ? el('p', { class: 'muted', text: 'none' })
        : el(
            'ol',
            { class: 'events' },
            span.logs.slice(0, 200).map((log) =>
              el(
                'li',
                {},
                el('span', {
                  class: 'event-time',
                  text: `+${formatDuration(log.timestamp - layout.start)}`,
                }),
                keyValueTable(log.fields ?? []),
              ),
            ),
          ),
    ),
    el(
      'section',
      {},
      el('h3', { text: `Links and references (${span.references.length})` }),
      span.references.length === 0
        ? el('p', { class: 'muted', text: 'none' })
        : el(
            'ul',
            { class: 'references' },
            span.references.slice(0, 200).map((ref) => referenceItem(trace, layout, ref)),
          ),
    ),
  ]
  return sections
}

function referenceItem(trace, layout, ref) {
  const target = layout.byId.get(ref.spanID)
  const label =
    ref.refType === 'CHILD_OF'
      ? 'child of'
      : ref.refType === 'FOLLOWS_FROM'
        ? 'link (follows from)'
        : ref.refType
  const sameTrace = ref.traceID === trace.traceID
  const inTrace = sameTrace && target
  // a parent that has not reached Jaeger (yet) leaves its children at the top level: say why
  const text = inTrace
    ? `${serviceOf(trace, target)}: ${target.operationName} (${ref.spanID})`
    : sameTrace
      ? `span ${ref.spanID}, not in this trace (not received)`
      : `span ${ref.spanID} of trace ${ref.traceID}`
  return el(
    'li',
    {},
    el('span', { class: 'ref-type', text: label }),
    ' ',
    sameTrace || !/^[0-9a-f]{1,32}$/i.test(ref.traceID ?? '')
      ? el('span', { text })
      : navLink(`trace/${ref.traceID}`, { text }),
  )
}

function keyValues(title, pairs) {
  return el(
    'section',
    {},
    el('h3', { text: `${title} (${pairs.length})` }),
    pairs.length === 0 ? el('p', { class: 'muted', text: 'none' }) : keyValueTable(pairs),
  )
}

function keyValueTable(pairs) {
  return el(
    'table',
    { class: 'kv' },
    el(
      'tbody',
      {},
      [...pairs]
        .sort((a, b) => String(a.key).localeCompare(String(b.key)))
        .slice(0, 500)
        .map((pair) =>
          el(
            'tr',
            {},
            el('th', { scope: 'row', text: String(pair.key) }),
            el('td', { text: valueText(pair.value) }),
          ),
        ),
    ),
  )
}

// ---------------------------------------------------------------------------------------------- routing

/** Counts the views shown: an answer that arrives after the reader moved on is dropped. */
let currentView = 0

function showError(error) {
  main.prepend(el('p', { class: 'error-message', role: 'alert', text: error.message }))
}

/** The view an address names: `trace/<id>`, or the search (`search?service=...`, and anything else). */
function route() {
  currentView += 1
  const path = location.pathname.startsWith(base.pathname)
    ? location.pathname.slice(base.pathname.length)
    : ''
  const trace = /^trace\/([0-9a-fA-F]{1,32})\/?$/.exec(path)
  if (trace) showTrace(trace[1].toLowerCase(), currentView)
  else showSearch(new URLSearchParams(location.search), currentView)
}

function navigate(href) {
  history.pushState(null, '', new URL(href, base))
  route()
  main.focus({ preventScroll: true })
  window.scrollTo(0, 0)
}

document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[data-nav]')
  if (!link || event.defaultPrevented || event.button !== 0) return
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  navigate(link.getAttribute('href'))
})
window.addEventListener('popstate', route)
document.getElementById('goto').addEventListener('submit', (event) => {
  event.preventDefault()
  const input = document.getElementById('goto-id')
  const id = input.value.trim()
  if (/^[0-9a-fA-F]{1,32}$/.test(id)) navigate(`trace/${id.toLowerCase()}`)
  else {
    input.setCustomValidity('A trace id is up to 32 hexadecimal digits')
    input.reportValidity()
    input.addEventListener('input', () => input.setCustomValidity(''), { once: true })
  }
})
route()
