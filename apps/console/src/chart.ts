// A line chart of one figure over time as plain geometry (no DOM): the readings of a time window scaled into a box,
// the SVG path through them, and the labels of both axes. The dashboard draws it; the unit tests read it.

/** One reading: when (epoch ms) and the value. */
export interface Reading {
  t: number
  value: number
}

export interface LineChartOptions {
  /** the SVG's box (its viewBox), in user units */
  width: number
  height: number
  /** how much time the x axis shows, ms, ending at `end` */
  spanMs: number
  /** the right edge of the x axis (epoch ms): the latest reading's time, so the server's clock sets the window */
  end: number
  /** the smallest top of the y axis: a flat zero line would otherwise fill the whole height */
  minimumTop: number
  /** a value as the y axis shows it */
  format(value: number): string
}

/** A label of an axis: where along it (x for the time axis, y for the value axis), and its text. */
export interface AxisLabel {
  at: number
  text: string
}

export interface LineChart {
  /** the area the line is drawn in; the labels sit left of it and below it */
  plot: { left: number; top: number; right: number; bottom: number }
  points: { x: number; y: number }[]
  /** an SVG path (`M x y L x y …`), empty without readings */
  path: string
  /** 0, the middle and the top of the value axis, bottom to top */
  yLabels: AxisLabel[]
  /** one per whole minute back from `end`, oldest first, the last one `now` */
  xLabels: AxisLabel[]
}

const margin = { left: 48, top: 8, right: 8, bottom: 20 }
const minute = 60_000

/** The readings inside the window of `spanMs` ending at `end`, oldest first. */
export function recent(readings: readonly Reading[], spanMs: number, end: number): Reading[] {
  return readings.filter((reading) => reading.t > end - spanMs && reading.t <= end)
}

/** The smallest 1, 2 or 5 × 10ⁿ at or above `value` (at least `minimum`): a top for the value axis. */
export function niceCeiling(value: number, minimum: number): number {
  const target = Math.max(value, minimum)
  if (!(target > 0)) return 1
  const power = 10 ** Math.floor(Math.log10(target))
  // the small epsilon keeps 0.3 / 0.1 (= 2.9999…) from rounding up a step
  const step = [1, 2, 5, 10].find((factor) => factor * power >= target * (1 - 1e-9)) ?? 10
  return step * power
}

const round = (coordinate: number) => Math.round(coordinate * 10) / 10

export function lineChart(readings: readonly Reading[], options: LineChartOptions): LineChart {
  const plot = {
    left: margin.left,
    top: margin.top,
    right: options.width - margin.right,
    bottom: options.height - margin.bottom,
  }
  const shown = recent(readings, options.spanMs, options.end)
  const top = niceCeiling(Math.max(0, ...shown.map((reading) => reading.value)), options.minimumTop)
  const start = options.end - options.spanMs
  const xOf = (t: number) => round(plot.left + ((t - start) / options.spanMs) * (plot.right - plot.left))
  const yOf = (value: number) =>
    round(plot.bottom - (Math.min(Math.max(value, 0), top) / top) * (plot.bottom - plot.top))

  const points = shown.map((reading) => ({ x: xOf(reading.t), y: yOf(reading.value) }))
  const path = points.map((point, index) => `${index === 0 ? 'M' : 'L'}${point.x} ${point.y}`).join(' ')
  const yLabels = [0, top / 2, top].map((value) => ({ at: yOf(value), text: options.format(value) }))
  const xLabels: AxisLabel[] = []
  for (let ago = Math.floor(options.spanMs / minute) * minute; ago >= 0; ago -= minute) {
    xLabels.push({ at: xOf(options.end - ago), text: ago === 0 ? 'now' : `−${ago / minute} min` })
  }
  return { plot, points, path, yLabels, xLabels }
}
