// Consul (Go) duration strings such as '30s', '1m30s' or '500ms', read as milliseconds.

const millisecondsPerUnit: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}

/** '55s' -> 55000; throws a TypeError for anything Consul would not accept as a duration. */
export function consulDurationToMs(duration: string): number {
  const part = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y
  let total = 0
  let position = 0
  while (position < duration.length) {
    part.lastIndex = position
    const match = part.exec(duration)
    if (!match) break
    total += Number(match[1]) * (millisecondsPerUnit[match[2] ?? ''] ?? Number.NaN)
    position = part.lastIndex
  }
  if (duration === '' || position !== duration.length || !Number.isFinite(total)) {
    throw new TypeError(`'${duration}' is not a Consul duration (examples: '10s', '1m30s', '500ms')`)
  }
  return total
}
