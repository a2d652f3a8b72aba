// The declarative topic list (infra/topics.json) expanded into every topic the broker must have.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { infraDir } from './layout.ts'

export interface TopicDeclaration {
  partitions: number
  retries: number
  eventTypes: string[]
}

export interface TopicSpec {
  name: string
  partitions: number
}

export function loadTopicDeclaration(file = join(infraDir, 'topics.json')): TopicDeclaration {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<TopicDeclaration>
  const { partitions, retries, eventTypes } = parsed
  if (!Number.isInteger(partitions) || (partitions as number) < 1)
    throw new Error(`${file}: partitions must be a positive integer`)
  if (!Number.isInteger(retries) || (retries as number) < 0)
    throw new Error(`${file}: retries must be a non-negative integer`)
  if (
    !Array.isArray(eventTypes) ||
    eventTypes.some((t) => typeof t !== 'string' || !/^[a-z]+(\.[a-z_0-9]+)+$/.test(t))
  ) {
    throw new Error(`${file}: eventTypes must be dotted lower-case names such as order.placed`)
  }
  return { partitions: partitions as number, retries: retries as number, eventTypes }
}

/** retry topic for attempt n (1-based), as the spec names it */
export const retryTopic = (type: string, attempt: number): string => `${type}.retry.${attempt}`
export const deadLetterTopic = (type: string): string => `${type}.dlt`

export function expandTopics(declaration: TopicDeclaration): TopicSpec[] {
  const { partitions, retries } = declaration
  return declaration.eventTypes.flatMap((type) => [
    { name: type, partitions },
    ...Array.from({ length: retries }, (_, i) => ({ name: retryTopic(type, i + 1), partitions })),
    { name: deadLetterTopic(type), partitions },
  ])
}
