// What an app logged, kept in memory so that a test can assert on it.
import { Writable } from 'node:stream'

export interface LogCapture {
  /** a pino destination: pass it as the app's log stream */
  stream: Writable
  /** every line logged so far, parsed */
  lines: Record<string, unknown>[]
}

/** Collects what an app logs, so a test can assert on it (what was logged, and what never was). */
export function captureLogs(): LogCapture {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { stream, lines }
}
