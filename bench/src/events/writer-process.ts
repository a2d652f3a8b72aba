// The load generator: appends events to the outbox, one a transaction, paced or as fast as allowed; or in bulk.
import { createDatabase, transaction } from '@meridian/db'
import { appendToOutbox, type DomainEvent, newEventId } from '@meridian/events'
import { monotonicMs } from './clock.ts'
import type { ChildConfig, PrefillReply, PrefillRequest, RunRequest, WriterRun } from './ipc.ts'
import { serveRole } from './serve-role.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** An envelope of the phase's own type (= its topic, not in the catalogue): built directly, as the tests do. */
function benchEvent(config: ChildConfig, seq: number, appendedAt: number): DomainEvent {
  return {
    id: newEventId(),
    type: config.topic,
    source: 'bench-events',
    schemaVersion: '1.0.0',
    timestamp: new Date().toISOString(),
    data: { seq, appendedAt },
  }
}

serveRole(async (config) => {
  const sql = createDatabase(config.databaseUrl, {
    max: config.connections,
    applicationName: 'bench-events-writer',
  })
  // open every connection before the clock starts
  await Promise.all(Array.from({ length: config.connections }, () => sql`select 1`))

  // set by close(): a run in progress ends its connections' loops
  let closing = false
  // the consumer's count, told by the bench; connections waiting for it to move
  let delivered = 0
  const waiting = new Set<() => void>()
  const nextDelivery = () =>
    new Promise<void>((resolve) => {
      waiting.add(resolve)
      // in case a notice is late or lost: look again soon
      setTimeout(() => {
        waiting.delete(resolve)
        resolve()
      }, 20)
    })

  return {
    notice(notice) {
      if (notice.kind !== 'delivered') return
      delivered = Math.max(delivered, notice.count)
      for (const resolve of waiting) resolve()
      waiting.clear()
    },
    async run({ rate, seconds, maxBacklog }: RunRequest): Promise<WriterRun> {
      const appendedAt: number[] = []
      const committedAt: number[] = []
      let errors = 0
      let next = 0
      const startedAt = monotonicMs()
      const endAt = startedAt + seconds * 1000

      // Open loop when paced: event n is due at start + n/rate whatever happened to the ones before it; a writer that
      // falls behind appends the late ones at once. Its append time is taken when it is written, not when it was due.
      // Unpaced with a bound: a connection waits while `maxBacklog` events are appended and not yet handled.
      const connection = async () => {
        for (;;) {
          if (maxBacklog !== null) {
            while (next - delivered >= maxBacklog && monotonicMs() < endAt && !closing) await nextDelivery()
          }
          if (closing) return
          const seq = next++
          if (rate !== null) {
            const due = startedAt + (seq * 1000) / rate
            if (due >= endAt) return
            const wait = due - monotonicMs()
            if (wait >= 1) await sleep(wait)
          } else if (monotonicMs() >= endAt) {
            return
          }
          try {
            await transaction(sql, async (tx) => {
              const at = monotonicMs()
              appendedAt[seq] = at
              await appendToOutbox(tx, benchEvent(config, seq, at), {
                aggregateId: `aggregate-${seq % config.aggregates}`,
              })
            })
            committedAt[seq] = monotonicMs()
          } catch (error) {
            errors += 1
            appendedAt[seq] = Number.NaN
            committedAt[seq] = Number.NaN
            if (errors <= 3 && !closing)
              process.stderr.write(`[bench:writer] append failed: ${String(error)}\n`)
          }
        }
      }
      await Promise.all(Array.from({ length: config.connections }, connection))
      // holes (a sequence number taken after the end) are absent events
      const length = appendedAt.length
      for (let seq = 0; seq < length; seq++) {
        appendedAt[seq] ??= Number.NaN
        committedAt[seq] ??= Number.NaN
      }
      return { startedAt, endedAt: monotonicMs(), appendedAt, committedAt, errors }
    },
    async prefill({ events, perTransaction }: PrefillRequest): Promise<PrefillReply> {
      const startedAt = monotonicMs()
      let next = 0
      let appended = 0
      const connection = async () => {
        for (;;) {
          const first = next
          if (first >= events || closing) return
          next = Math.min(events, first + perTransaction)
          const last = next
          await transaction(sql, async (tx) => {
            for (let seq = first; seq < last; seq++) {
              await appendToOutbox(tx, benchEvent(config, seq, monotonicMs()), {
                aggregateId: `aggregate-${seq % config.aggregates}`,
              })
            }
          })
          appended += last - first
        }
      }
      await Promise.all(Array.from({ length: config.connections }, connection))
      return { appended, seconds: (monotonicMs() - startedAt) / 1000 }
    },
    close() {
      closing = true
      return sql.end({ timeout: 5 })
    },
  }
})
