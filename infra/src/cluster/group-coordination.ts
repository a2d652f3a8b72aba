// Whether a cluster can coordinate consumer groups: which partition of the offsets topic coordinates a group, and a
// probe that asks the coordinator of every partition.
import type { KafkaSecurity } from '@meridian/kafka-connection'
import { offsetsTopicPartitions } from '../native/kafka.ts'
import { kafkaClient } from '../probes.ts'

/** Java's String.hashCode, with which Kafka places a group id. */
function javaStringHash(text: string): number {
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0
  return hash
}

/**
 * The partition of the offsets topic whose leader coordinates `groupId`: Kafka's GroupMetadataManager.partitionFor,
 * `Utils.abs(groupId.hashCode) % partitions`, where Utils.abs maps Integer.MIN_VALUE to 0.
 */
export function offsetsPartitionOf(groupId: string, partitions = offsetsTopicPartitions): number {
  const hash = javaStringHash(groupId)
  return (hash === -(2 ** 31) ? 0 : Math.abs(hash)) % partitions
}

/** One group id per partition of the offsets topic, in the partitions' order: asking for each asks every coordinator. */
export function coordinationProbeGroups(partitions = offsetsTopicPartitions): string[] {
  const byPartition = new Map<number, string>()
  for (let n = 0; byPartition.size < partitions; n++) {
    const groupId = `meridian-coordination-probe-${n}`
    const partition = offsetsPartitionOf(groupId, partitions)
    if (!byPartition.has(partition)) byPartition.set(partition, groupId)
  }
  return [...byPartition].sort(([a], [b]) => a - b).map(([, groupId]) => groupId)
}

const probeGroups = coordinationProbeGroups()

/**
 * Resolves once the coordinator of every partition of the offsets topic answers; throws until then. A cluster has no
 * offsets topic until a client first asks where a group's coordinator is: that question makes the controller create
 * it, and each broker then creates its partitions and loads them as coordinator when it gets to them, behind any
 * partitions it is still creating. A consumer that asks meanwhile hears "not available" from every broker; kafkajs
 * gives up after its retries with KafkaJSGroupCoordinatorNotFound, an error it never restarts a consumer from. So the
 * probe asks the question first, and asks again until each coordinator describes its (absent) group.
 */
export async function groupsCoordinated(brokers: string, security: KafkaSecurity = {}): Promise<void> {
  const admin = kafkaClient(brokers, 'meridian-cluster', security).admin()
  await admin.connect()
  try {
    // FindCoordinator for each group, then DescribeGroups on each coordinator: an error per group until it has loaded
    await admin.describeGroups(probeGroups)
  } finally {
    await admin.disconnect()
  }
}
