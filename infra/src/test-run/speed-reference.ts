// The run's speed reference: a fixed piece of single-threaded work, the same on every machine and in every run, timed
// by the CPU it takes. Machines of one kind differ several-fold, and one machine from one hour to the next (two warm
// runs of nearly the same code, hours apart, took 1828 s and 2425 s, every phase slower alike): a run's times mean
// little without the machine's speed beside them. ./scripts/test measures it alone at its start and again at its end,
// and the closing table prints both and the run's total in references.
//   tsx infra/src/test-run/speed-reference.ts <file> <label>   appends `label<TAB>cpu seconds<TAB>wall seconds`
import { createHash } from 'node:crypto'
import { appendFileSync } from 'node:fs'
import { deflateSync } from 'node:zlib'

/** What a run of tests mostly does in Node: build and parse JSON, hash, match patterns, sort, compress. */
export function referenceWork(rounds = 100): string {
  const hash = createHash('sha256')
  for (let round = 0; round < rounds; round++) {
    const records = Array.from({ length: 2000 }, (_, i) => ({
      id: `order-${round}-${i}`,
      items: [{ sku: `SKU-${(i * 7919) % 1000}`, quantity: (i % 5) + 1, price: ((i * 31) % 9000) / 100 }],
      status: ['placed', 'paid', 'shipped', 'delivered'][i % 4],
    }))
    const text = JSON.stringify(records)
    const parsed = JSON.parse(text) as typeof records
    parsed.sort(
      (a, b) => (a.items[0]?.sku ?? '').localeCompare(b.items[0]?.sku ?? '') || a.id.localeCompare(b.id),
    )
    let matched = 0
    for (const record of parsed) if (/^order-\d+-\d*7$/.test(record.id)) matched++
    hash.update(text).update(String(matched))
    hash.update(deflateSync(Buffer.from(text.slice(0, 50_000))))
  }
  return hash.digest('hex')
}

export interface ReferenceTime {
  /** CPU seconds (user and system) of the work, the median of the repeats */
  cpuSeconds: number
  /** wall seconds of that same repeat: above the CPU when the machine was busy with something else */
  wallSeconds: number
}

/** The work done `repeats` times (a first, unmeasured, warms the JIT); the repeat of median CPU time. */
export function measureReference(repeats = 3, rounds?: number): ReferenceTime {
  referenceWork(rounds)
  const times: ReferenceTime[] = []
  for (let i = 0; i < repeats; i++) {
    const cpu = process.cpuUsage()
    const wall = process.hrtime.bigint()
    referenceWork(rounds)
    const used = process.cpuUsage(cpu)
    times.push({
      cpuSeconds: (used.user + used.system) / 1e6,
      wallSeconds: Number(process.hrtime.bigint() - wall) / 1e9,
    })
  }
  times.sort((a, b) => a.cpuSeconds - b.cpuSeconds)
  return times[Math.floor(times.length / 2)] as ReferenceTime
}

/** The lines the CLI appends, read back: label → time. */
export function readReferences(text: string): Map<string, ReferenceTime> {
  const found = new Map<string, ReferenceTime>()
  for (const line of text.split('\n')) {
    const [label, cpu, wall] = line.split('\t')
    if (label && cpu && wall) found.set(label, { cpuSeconds: Number(cpu), wallSeconds: Number(wall) })
  }
  return found
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, label] = process.argv.slice(2)
  if (!file || !label) throw new Error('usage: speed-reference.ts <file> <label>')
  const time = measureReference()
  appendFileSync(file, `${label}\t${time.cpuSeconds.toFixed(3)}\t${time.wallSeconds.toFixed(3)}\n`)
}
