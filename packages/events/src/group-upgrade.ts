// The upgrade from one Kafka group per consumed topic to one per service: a service's new group starts where its old
// per-topic groups had committed, so that a deployment upgraded in place neither reads every topic again nor skips
// what was published while it was being upgraded.
import type { Admin, Kafka } from 'kafkajs'
import type { ConsumerLogger } from './consumer-logger.ts'

/**
 * The Kafka group a consumer of `topic` in `group` had before a service's types shared one group
 * (`<group>.<topic>`). Read only to carry its offsets over (adoptPerTopicOffsets); such groups are left in place
 * for an operator to delete (docs/reference/domain-events.md).
 */
export const perTopicGroupIdOf = (group: string, topic: string): string => `${group}.${topic}`

/** An event topic a group reads and every topic its old per-topic group read: the topic and its retry topics. */
export interface ConsumedTopics {
  eventTopic: string
  topics: readonly string[]
}

/** Offsets copied from an old per-topic group into the service's group. */
export interface AdoptedOffsets {
  from: string
  topic: string
  partitions: { partition: number; offset: string }[]
}

/**
 * For each topic `group` reads and has never committed an offset on, commits as the group's offsets those its old
 * per-topic group (perTopicGroupIdOf) committed there, so that an upgraded deployment neither reads the topic again
 * nor skips what was published meanwhile (the inbox skips the events both read). Called before the group's consumer
 * joins. A topic the group committed on is left alone, and so is one whose old group never committed (the consumer's
 * `fromBeginning` decides).
 *
 * Kafka takes a group's commits from a member of its current generation: a consumer of the group joins, paused, for
 * just that commit (kafkajs' admin setOffsets does the same, once per topic, each join taking seconds). Instances
 * starting together may each do it; they commit the same offsets, and a member that committed further in between
 * has its partitions read again from the old offsets, which the inbox skips.
 */
export async function adoptPerTopicOffsets(options: {
  kafka: Kafka
  group: string
  consumed: readonly ConsumedTopics[]
  logger: ConsumerLogger
}): Promise<AdoptedOffsets[]> {
  const { kafka, group, logger } = options
  const admin = kafka.admin()
  await admin.connect()
  let adopted: AdoptedOffsets[]
  try {
    adopted = await offsetsToAdopt(admin, group, options.consumed)
  } finally {
    await admin.disconnect()
  }
  if (adopted.length === 0) return []
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100, allowAutoTopicCreation: false })
  try {
    await consumer.connect()
    const topics = adopted.map(({ topic }) => topic)
    await consumer.subscribe({ topics, fromBeginning: false })
    const joined = new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.GROUP_JOIN, () => resolve())
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (!payload.restart) reject(payload.error)
      })
    })
    // nothing is read or committed but the adopted offsets: batches fetched before the pause are left unresolved
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => {} })
    consumer.pause(topics.map((topic) => ({ topic })))
    await joined
    await consumer.commitOffsets(
      adopted.flatMap(({ topic, partitions }) =>
        partitions.map(({ partition, offset }) => ({ topic, partition, offset })),
      ),
    )
  } finally {
    await consumer.disconnect()
  }
  logger.info(
    { group, from: [...new Set(adopted.map(({ from }) => from))], topics: adopted.map(({ topic }) => topic) },
    "the group starts where the service's per-topic groups had committed",
  )
  return adopted
}

/** Attempts of a fetch the broker answered with a retriable error, and the first pause between them (doubling). */
const fetchAttempts = 8
const firstPauseMs = 100

/**
 * `fetch`, asked again while the broker answers with a retriable error: a group the cluster has not seen yet has a
 * coordinator still being chosen or loading ("This is not the correct coordinator for this group", which kafkajs'
 * admin does not retry), met on a fresh broker.
 */
async function retriable<T>(fetch: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch()
    } catch (error) {
      if (attempt >= fetchAttempts || (error as { retriable?: boolean }).retriable !== true) throw error
      await new Promise((resolve) => setTimeout(resolve, firstPauseMs * 2 ** (attempt - 1)))
    }
  }
}

/** The old groups' committed offsets on the topics `group` has no committed offset on. */
async function offsetsToAdopt(
  admin: Admin,
  group: string,
  consumed: readonly ConsumedTopics[],
): Promise<AdoptedOffsets[]> {
  const hasCommitted = ({ partitions }: { partitions: { offset: string }[] }) =>
    partitions.some(({ offset }) => offset !== '-1')
  const own = await retriable(() =>
    admin.fetchOffsets({ groupId: group, topics: consumed.flatMap(({ topics }) => [...topics]) }),
  )
  const started = new Set(own.filter(hasCommitted).map(({ topic }) => topic))
  const pending: AdoptedOffsets[] = []
  for (const { eventTopic, topics } of consumed) {
    const fresh = topics.filter((topic) => !started.has(topic))
    if (fresh.length === 0) continue
    const from = perTopicGroupIdOf(group, eventTopic)
    for (const { topic, partitions } of await retriable(() =>
      admin.fetchOffsets({ groupId: from, topics: fresh }),
    )) {
      const committed = partitions
        .filter(({ offset }) => offset !== '-1')
        .map(({ partition, offset }) => ({ partition, offset }))
      if (committed.length > 0) pending.push({ from, topic, partitions: committed })
    }
  }
  return pending
}
