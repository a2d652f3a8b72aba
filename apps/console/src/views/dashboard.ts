// Dashboard (admins): the system's live figures from the realtime channel's /dashboard namespace (metrics:snapshot on
// connect, then metrics:update every interval), each drawn as a line chart of the last five minutes (src/chart.ts)
// with its current value in words. The namespace is connected while the view is open, so the gateway samples only
// while someone watches.
import type { DashboardMetricName, DashboardMetrics } from '@meridian/contracts'
import { type LineChart, lineChart, type Reading, recent } from '../chart.ts'
import { errorBox, h, panel, show } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

const spanMs = 5 * 60_000
const box = { width: 448, height: 148 }

interface Figure {
  metric: DashboardMetricName
  title: string
  /** the value as the axis shows it */
  format(value: number): string
  /** the value as a sentence says it */
  spoken(value: number): string
  minimumTop: number
}

const trim = (value: number) => String(+value.toFixed(2))

const figures: Figure[] = [
  {
    metric: 'activeUsers',
    title: 'Active users',
    format: (value) => trim(value),
    spoken: (value) => `${Math.round(value)} ${Math.round(value) === 1 ? 'user' : 'users'} connected`,
    minimumTop: 5,
  },
  {
    metric: 'requestsPerSecond',
    title: 'Requests per second',
    format: (value) => trim(value),
    spoken: (value) => `${value.toFixed(1)} requests per second`,
    minimumTop: 1,
  },
  {
    metric: 'errorRate',
    title: 'Error rate',
    format: (value) => `${trim(value * 100)} %`,
    spoken: (value) => `${(value * 100).toFixed(1)} % of answers were errors`,
    minimumTop: 0.01,
  },
  {
    metric: 'p95Latency',
    title: 'p95 latency',
    format: (value) => `${trim(value)} ms`,
    spoken: (value) => `95 % of requests answered within ${Math.round(value)} ms`,
    minimumTop: 10,
  },
]

const svgNamespace = 'http://www.w3.org/2000/svg'

function svg(tag: string, attributes: Record<string, string | number>, text?: string): SVGElement {
  const element = document.createElementNS(svgNamespace, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  if (text !== undefined) element.textContent = text
  return element
}

/** The chart's drawing: grid lines at the value labels, the time labels, the line and its latest point. */
function drawing(chart: LineChart): SVGElement[] {
  const { plot } = chart
  const parts: SVGElement[] = []
  for (const label of chart.yLabels) {
    parts.push(svg('line', { class: 'grid', x1: plot.left, x2: plot.right, y1: label.at, y2: label.at }))
    parts.push(svg('text', { x: plot.left - 6, y: label.at + 4, 'text-anchor': 'end' }, label.text))
  }
  for (const [index, label] of chart.xLabels.entries()) {
    const anchor = index === 0 ? 'start' : index === chart.xLabels.length - 1 ? 'end' : 'middle'
    parts.push(svg('text', { x: label.at, y: plot.bottom + 15, 'text-anchor': anchor }, label.text))
  }
  if (chart.path) parts.push(svg('path', { class: 'line', d: chart.path }))
  const latest = chart.points.at(-1)
  if (latest) parts.push(svg('circle', { class: 'latest', cx: latest.x, cy: latest.y, r: 3 }))
  return parts
}

/** One figure's panel: its heading, its value now in words, and the chart (an image described by that value). */
function figurePanel(figure: Figure) {
  const titleId = `chart-${figure.metric}-title`
  const now = h('p', { class: 'figure-now' }, 'No reading yet')
  const picture = svg('svg', {
    role: 'img',
    viewBox: `0 0 ${box.width} ${box.height}`,
    'aria-label': `${figure.title}: no reading yet`,
  })
  const element = h(
    'section',
    { class: 'chart', 'data-metric': figure.metric, 'data-points': 0, 'aria-labelledby': titleId },
    h('h2', { id: titleId }, figure.title),
    now,
    picture,
  )
  let readings: Reading[] = []

  return {
    element,
    add(metrics: DashboardMetrics) {
      const value = metrics[figure.metric]
      const last = readings.at(-1)
      // a snapshot on reconnect may repeat the latest update
      if (value !== undefined && (!last || metrics.timestamp > last.t)) {
        readings = recent([...readings, { t: metrics.timestamp, value }], spanMs, metrics.timestamp)
      }
      const end = readings.at(-1)?.t ?? metrics.timestamp
      const chart = lineChart(readings, {
        ...box,
        spanMs,
        end,
        minimumTop: figure.minimumTop,
        format: figure.format,
      })
      // what could not be measured this time is said, not shown as 0
      const said = value === undefined ? 'not measured at the moment' : figure.spoken(value)
      now.textContent = value === undefined ? 'Not measured at the moment' : figure.format(value)
      picture.setAttribute(
        'aria-label',
        `${figure.title} over the last 5 minutes (${chart.points.length} readings): now ${said}`,
      )
      picture.replaceChildren(...drawing(chart))
      element.dataset.points = String(chart.points.length)
    },
  }
}

export function dashboardView({ realtime }: ViewContext): View {
  const panels = figures.map(figurePanel)
  const status = h('div', { role: 'status' }, 'Waiting for the first figures…')
  const socket = realtime.namespace('/dashboard')

  const onMetrics = (metrics: DashboardMetrics) => {
    show(status)
    for (const panel of panels) panel.add(metrics)
  }
  const onRefused = (error: Error) => show(status, errorBox(error))

  socket.on('metrics:snapshot', onMetrics)
  socket.on('metrics:update', onMetrics)
  socket.on('connect_error', onRefused)
  // the socket is the page's for the session: connected again when the view comes back
  if (!socket.active) socket.connect()

  return {
    element: panel(
      'dashboard',
      'Dashboard',
      h('p', {}, 'The whole system, live: each chart shows the last five minutes.'),
      status,
      h('div', { class: 'charts' }, ...panels.map((panel) => panel.element)),
    ),
    close() {
      socket.off('metrics:snapshot', onMetrics)
      socket.off('metrics:update', onMetrics)
      socket.off('connect_error', onRefused)
      socket.disconnect()
    },
  }
}
