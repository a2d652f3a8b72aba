import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { expandTopics, loadTopicDeclaration } from '../src/topics.ts'

describe('topic declaration', () => {
  it('when the repository list is expanded, then every catalogue event has its topic, three retry topics and a dead-letter topic, 3 partitions each', () => {
    const declaration = loadTopicDeclaration()
    const topics = expandTopics(declaration)
    expect(declaration.eventTypes).toContain('order.placed')
    expect(declaration.eventTypes).toContain('notification.created')
    expect(topics).toHaveLength(declaration.eventTypes.length * 5)
    expect(topics.filter((t) => t.name.startsWith('order.placed')).map((t) => t.name)).toEqual([
      'order.placed',
      'order.placed.retry.1',
      'order.placed.retry.2',
      'order.placed.retry.3',
      'order.placed.dlt',
    ])
    expect(new Set(topics.map((t) => t.partitions))).toEqual(new Set([3]))
  })

  it('when the list holds a name that is not a dotted event type, then loading it fails and says why', () => {
    const dir = mkdtempSync(join(tmpdir(), 'topics-'))
    const file = join(dir, 'topics.json')
    writeFileSync(file, JSON.stringify({ partitions: 3, retries: 3, eventTypes: ['OrderPlaced'] }))
    expect(() => loadTopicDeclaration(file)).toThrow(/dotted lower-case names/)
    writeFileSync(file, JSON.stringify({ partitions: 0, retries: 3, eventTypes: [] }))
    expect(() => loadTopicDeclaration(file)).toThrow(/partitions must be a positive integer/)
  })
})
