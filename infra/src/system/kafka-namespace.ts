// A run's Kafka namespace (KAFKA_NAMESPACE): every declared topic (infra/topics.json, with its retry and dead-letter
// topics) under the run's prefix, created before the services start (the broker creates no topic by itself) and
// deleted with the run's consumer groups at the end.
import type { KafkaSecurity } from '@meridian/kafka-connection'
import { createTopics, kafkaClient, type TopicReplication } from '../probes.ts'
import { expandTopics, loadTopicDeclaration } from '../topics.ts'

/**
 * `replication`: a run on a three-broker cluster asks for 3 copies and min.insync.replicas 2; the default is 1.
 * `security`: a secure broker's TLS and SASL, an administrator's (none for a plaintext one).
 */
export async function createNamespaceTopics(
  brokers: string,
  namespace: string,
  replication: TopicReplication = {},
  security: KafkaSecurity = {},
): Promise<string[]> {
  const topics = expandTopics(loadTopicDeclaration()).map((topic) => ({
    ...topic,
    name: `${namespace}${topic.name}`,
  }))
  await createTopics(brokers, topics, replication, security)
  return topics.map((topic) => topic.name)
}

/**
 * Deletes the namespace's consumer groups and topics (every one with the prefix, declared or not). A group that
 * cannot go yet (a member the coordinator has not seen leave) is left for Kafka to expire: the topics go regardless.
 */
export async function deleteNamespace(
  brokers: string,
  namespace: string,
  security: KafkaSecurity = {},
): Promise<{ groupsLeft: string[] }> {
  if (namespace === '') throw new Error('refusing to delete the topics of the empty namespace')
  const admin = kafkaClient(brokers, 'meridian-system', security).admin()
  await admin.connect()
  try {
    const { groups } = await admin.listGroups()
    const groupsLeft: string[] = []
    for (const { groupId } of groups.filter((group) => group.groupId.startsWith(namespace))) {
      try {
        await admin.deleteGroups([groupId])
      } catch {
        groupsLeft.push(groupId)
      }
    }
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(namespace))
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 })
    return { groupsLeft }
  } finally {
    await admin.disconnect()
  }
}
