// Reading a topic's partitions between two offsets each, through a consumer that commits nothing by itself: what the
// replay of a dead-letter topic and the dead-letter reader share.
import type { Consumer, KafkaMessage } from 'kafkajs'

/** What is left to read of one partition: offsets start (included) to end (excluded). */
export interface OffsetRange {
  start: bigint
  end: bigint
}

export interface ReadRangesOptions {
  /** connected, not subscribed yet */
  consumer: Consumer
  topic: string
  /** each partition with something to read; a range moves on as its messages are handled, and goes when it is read */
  ranges: Map<number, OffsetRange>
  /** one batch's messages inside its partition's range, in offset order; the partition waits until it resolves */
  handle(partition: number, messages: KafkaMessage[]): Promise<void>
  /** give up when the broker sends nothing for this long while ranges are left */
  idleTimeoutMs: number
  /** what the stall error calls this reading, e.g. `replay of order.placed.dlt` */
  what: string
}

/**
 * Reads every range: each partition from its range's start (sought, wherever the consumer's group stands) up to the
 * end, then resolves. Rejects when the consumer crashes (restarted, it would read again after this has settled) or
 * nothing arrives for idleTimeoutMs. The caller disconnects the consumer.
 */
export async function readRanges(options: ReadRangesOptions): Promise<void> {
  const { consumer, topic, ranges, idleTimeoutMs } = options
  if (ranges.size === 0) return
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await new Promise<void>((resolve, reject) => {
    let idle = setTimeout(onIdle, idleTimeoutMs)
    function onIdle() {
      reject(
        new Error(
          `${options.what} stalled: nothing from the broker for ${idleTimeoutMs} ms while partitions ` +
            `${[...ranges.keys()].join(', ')} were not finished`,
        ),
      )
    }
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      clearTimeout(idle)
      reject(payload.error)
    })
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          const range = ranges.get(batch.partition)
          if (range === undefined) return
          const inRange = batch.messages.filter((message) => {
            const offset = BigInt(message.offset)
            return offset >= range.start && offset < range.end
          })
          if (inRange.length === 0) return
          await options.handle(batch.partition, inRange)
          range.start = BigInt(inRange[inRange.length - 1]!.offset) + 1n
          clearTimeout(idle)
          idle = setTimeout(onIdle, idleTimeoutMs)
          if (range.start >= range.end) ranges.delete(batch.partition)
          if (ranges.size === 0) {
            clearTimeout(idle)
            resolve()
          }
        },
      })
      .then(() => {
        for (const [partition, { start }] of ranges)
          consumer.seek({ topic, partition, offset: start.toString() })
      })
      .catch((error: unknown) => {
        clearTimeout(idle)
        reject(error)
      })
  })
}
