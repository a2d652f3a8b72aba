// Names no other test file or run will choose, so that files sharing one server, broker or agent never meet.
import { randomBytes } from 'node:crypto'

/**
 * A name no other test file or run will choose: `<prefix>-<time>-<random>`, lower case.
 * Use it for topics, consumer groups, Consul services, Redis channels.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`.toLowerCase()
}
