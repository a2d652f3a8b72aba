// The bare baseline of bench:saga: four hops of plain kafkajs, as many as an order's saga takes from order.placed to
// order's reading of shipment.created (order.placed -> payment, payment.processed -> inventory, inventory.reserved ->
// shipping, shipment.created -> order), each a consumer that produces the next message as soon as it reads one, acks from all replicas as the services' producer asks. No
// database, no outbox, no inbox: the floor the broker and the client library set on this machine.
import { type Consumer, Kafka, logLevel, type Producer } from 'kafkajs'
import { percentile } from '../load.ts'

export interface HopsOptions {
  brokers: string
  rate: number
  seconds: number
  /** topics are `<namespace>bench.hop.<n>` (the run's namespace: removed with it) */
  namespace: string
}

export interface HopsResult {
  messages: number
  received: number
  p50: number
  p99: number
}

const hops = 4

export async function runKafkaHopsBaseline(options: HopsOptions): Promise<HopsResult> {
  const kafka = new Kafka({
    clientId: 'bench-saga-hops',
    brokers: options.brokers.split(','),
    logLevel: logLevel.NOTHING,
  })
  const topics = Array.from({ length: hops }, (_, n) => `${options.namespace}bench.hop.${n}`)
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    topics: topics.map((topic) => ({ topic, numPartitions: 3 })),
    waitForLeaders: true,
  })
  await admin.disconnect()

  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 5 })
  await producer.connect()
  const consumers: Consumer[] = []
  const latencies: number[] = []
  const sentAt = new Map<string, number>()
  try {
    for (let n = 0; n < hops; n++) {
      const consumer = kafka.consumer({ groupId: `${options.namespace}bench-hop-${n}`, maxWaitTimeInMs: 100 })
      await consumer.connect()
      await consumer.subscribe({ topic: topics[n] as string, fromBeginning: true })
      const next = topics[n + 1] ?? ''
      const last = n === hops - 1
      await consumer.run({
        eachMessage: async ({ message }) => {
          const key = message.key?.toString() ?? ''
          if (last) {
            const at = sentAt.get(key)
            if (at !== undefined) latencies.push(performance.now() - at)
            return
          }
          await producer.send({ topic: next, acks: -1, messages: [{ key, value: message.value }] })
        },
      })
      consumers.push(consumer)
    }
    // the consumers' joins settle before timing starts
    await new Promise((resolve) => setTimeout(resolve, 3000))

    const total = Math.round(options.rate * options.seconds)
    const started = performance.now()
    const sends: Promise<unknown>[] = []
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / options.rate
      const wait = due - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      const key = `m-${i}`
      sentAt.set(key, performance.now())
      sends.push(
        producer.send({ topic: topics[0] as string, acks: -1, messages: [{ key, value: String(i) }] }),
      )
    }
    await Promise.all(sends)
    const deadline = performance.now() + 30_000
    while (latencies.length < total && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const sorted = [...latencies].sort((a, b) => a - b)
    return {
      messages: total,
      received: sorted.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
    }
  } finally {
    for (const consumer of consumers) await consumer.disconnect().catch(() => {})
    await producer.disconnect().catch(() => {})
    const cleanup = kafka.admin()
    await cleanup.connect()
    await cleanup.deleteTopics({ topics }).catch(() => {})
    await cleanup.disconnect()
  }
}
