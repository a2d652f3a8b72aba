// The dashboard's line charts as geometry (src/chart.ts): the window, the scaling, the path and the axes' labels.
import { describe, expect, it } from 'vitest'
import { lineChart, niceCeiling, type Reading, recent } from '../src/chart.ts'

const end = 1_700_000_000_000
const options = {
  width: 448,
  height: 148,
  spanMs: 5 * 60_000,
  end,
  minimumTop: 1,
  format: (value: number) => String(value),
}
// the plot area of that box: 48 left, 8 right, 8 top and 20 bottom are the labels' margins
const plot = { left: 48, top: 8, right: 440, bottom: 128 }

const readingsAgo = (...pairs: [secondsAgo: number, value: number][]): Reading[] =>
  pairs.map(([secondsAgo, value]) => ({ t: end - secondsAgo * 1000, value }))

describe('recent', () => {
  it('when readings are older than the window or later than its end, then they are left out', () => {
    const readings = readingsAgo([301, 1], [300, 2], [299, 3], [0, 4], [-1, 5])
    expect(recent(readings, options.spanMs, end).map((reading) => reading.value)).toEqual([3, 4])
  })
})

describe('niceCeiling', () => {
  it('when the largest value is between steps, then the top is the next 1, 2 or 5 × 10ⁿ', () => {
    expect([7, 10, 12, 120, 0.003, 0.3].map((value) => niceCeiling(value, 0.001))).toEqual([
      10, 10, 20, 200, 0.005, 0.5,
    ])
  })

  it('when every value is below the minimum (or zero), then the top is the minimum', () => {
    expect(niceCeiling(0, 5)).toBe(5)
    expect(niceCeiling(0.2, 1)).toBe(1)
  })
})

describe('lineChart', () => {
  it('when there is no reading, then there is no point and no path but the axes are labelled', () => {
    const chart = lineChart([], options)
    expect(chart.points).toEqual([])
    expect(chart.path).toBe('')
    expect(chart.yLabels.map((label) => label.text)).toEqual(['0', '0.5', '1'])
    expect(chart.xLabels.map((label) => label.text)).toEqual([
      '−5 min',
      '−4 min',
      '−3 min',
      '−2 min',
      '−1 min',
      'now',
    ])
  })

  it('when readings span the window, then the oldest is near the left edge and the latest at the right one', () => {
    const chart = lineChart(readingsAgo([299, 2], [150, 4], [0, 8]), options)
    expect(chart.plot).toEqual(plot)
    expect(chart.points[0]!.x).toBeCloseTo(plot.left + 392 / 300, 0)
    expect(chart.points[1]!.x).toBeCloseTo((plot.left + plot.right) / 2, 0)
    expect(chart.points[2]).toEqual({ x: plot.right, y: 32 })
    expect(chart.path).toMatch(/^M[\d.]+ [\d.]+ L[\d.]+ [\d.]+ L440 32$/)
  })

  it('when the largest value is 8, then the value axis goes from 0 to 10 and values are placed on it', () => {
    const chart = lineChart(readingsAgo([60, 0], [30, 5], [0, 8]), options)
    expect(chart.yLabels).toEqual([
      { at: plot.bottom, text: '0' },
      { at: 68, text: '5' },
      { at: plot.top, text: '10' },
    ])
    expect(chart.points.map((point) => point.y)).toEqual([plot.bottom, 68, 32])
  })

  it('when a reading is older than the window, then it is not drawn', () => {
    const chart = lineChart(readingsAgo([600, 1000], [10, 1]), options)
    expect(chart.points).toHaveLength(1)
    expect(chart.yLabels.at(-1)!.text).toBe('1')
  })

  it('when the x labels are placed, then the oldest minute is at the left edge and now at the right edge', () => {
    const chart = lineChart([], options)
    expect(chart.xLabels[0]!.at).toBe(plot.left)
    expect(chart.xLabels.at(-1)!.at).toBe(plot.right)
  })
})
