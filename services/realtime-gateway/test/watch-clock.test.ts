// The credentials' clock (channels/session.ts): every socket's next moment in one heap with a single timer — each
// item reached at its moment, in order, once; rescheduled or cancelled at once; past setTimeout's range in steps.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Timed, WatchClock } from '../src/channels/watch-clock.ts'

const start = 1_800_000_000_000

function item(name: string, log: string[]): Timed {
  return {
    due: 0,
    slot: -1,
    reached() {
      log.push(name)
    },
  }
}

describe('the credentials clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: start })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('when many items are due at different moments, then each is reached at its moment, in order, and only once', () => {
    const clock = new WatchClock()
    const log: string[] = []
    // a shuffled set of moments, two of them equal, one already past
    const moments = [700, 100, 900, 300, 300, 50, 1000, 20, 600, -5]
    for (const [index, offset] of moments.entries())
      clock.schedule(item(`i${index}:${offset}`, log), start + offset)
    expect(clock.size).toBe(10)
    // one timer for all of them
    expect(vi.getTimerCount()).toBe(1)

    vi.advanceTimersByTime(0)
    expect(log).toEqual(['i9:-5'])
    vi.advanceTimersByTime(300)
    expect(log).toEqual([
      'i9:-5',
      'i7:20',
      'i5:50',
      'i1:100',
      expect.stringMatching(/:300$/),
      expect.stringMatching(/:300$/),
    ])
    vi.advanceTimersByTime(1000)
    expect(log.map((entry) => Number(entry.split(':')[1]))).toEqual([...moments].sort((a, b) => a - b))
    expect(clock.size).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('when an item is rescheduled or cancelled, then it is reached at its new moment, or never', () => {
    const clock = new WatchClock()
    const log: string[] = []
    const [a, b, c] = ['a', 'b', 'c'].map((name) => item(name, log)) as [Timed, Timed, Timed]
    clock.schedule(a, start + 100)
    clock.schedule(b, start + 200)
    clock.schedule(c, start + 300)
    clock.schedule(a, start + 400)
    clock.cancel(b)
    clock.cancel(b)
    expect(b.slot).toBe(-1)
    vi.advanceTimersByTime(1000)
    expect(log).toEqual(['c', 'a'])
  })

  it('when an item reached schedules itself again, then it is reached again at that moment', () => {
    const clock = new WatchClock()
    const log: string[] = []
    const twice: Timed = {
      due: 0,
      slot: -1,
      reached() {
        log.push(`at ${Date.now() - start}`)
        if (log.length === 1) clock.schedule(twice, start + 500)
      },
    }
    clock.schedule(twice, start + 100)
    vi.advanceTimersByTime(1000)
    expect(log).toEqual(['at 100', 'at 500'])
  })

  it("when a moment lies past setTimeout's range, then the clock waits in steps and reaches it on time", () => {
    const clock = new WatchClock()
    const log: string[] = []
    const far = 2 ** 31 + 10_000
    clock.schedule(item('far', log), start + far)
    vi.advanceTimersByTime(2 ** 31 - 1)
    expect(log).toEqual([])
    vi.advanceTimersByTime(far - (2 ** 31 - 1))
    expect(log).toEqual(['far'])
  })
})
