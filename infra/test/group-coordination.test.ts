import { describe, expect, it } from 'vitest'
import { coordinationProbeGroups, offsetsPartitionOf } from '../src/cluster/group-coordination.ts'

describe('group coordination', () => {
  it("when a group id is placed, then it lands on Kafka's partition: abs(Java hashCode) mod the partitions", () => {
    // a value quoted from Kafka's own arithmetic, and the one string whose hashCode is Integer.MIN_VALUE (abs gives 0)
    expect(offsetsPartitionOf('console-consumer-46999', 50)).toBe(8)
    expect(offsetsPartitionOf('polygenelubricants', 10)).toBe(0)
    // a negative hashCode (-1229435672): the group a three-broker cluster coordinated on the leader of partition 2
    expect(offsetsPartitionOf('ck-62ce4ade.ck-readers', 10)).toBe(2)
  })

  it('when probe groups are chosen, then there is one on each partition of the offsets topic, in order', () => {
    const probes = coordinationProbeGroups(10)
    expect(probes.map((groupId) => offsetsPartitionOf(groupId, 10))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(new Set(probes).size).toBe(10)
  })
})
