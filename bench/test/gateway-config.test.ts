// Where the gateway bench's services keep their Redis keys: the same server, a logical database of the bench's own.
import { describe, expect, it } from 'vitest'
import { benchRedisDatabase, redisUrlWithDatabase } from '../src/gateway/gateway-config.ts'

describe('gateway bench Redis', () => {
  it('when the endpoint names no database or another one, then the bench uses its own on the same server', () => {
    expect(redisUrlWithDatabase('redis://127.0.0.1:6379', benchRedisDatabase)).toBe(
      'redis://127.0.0.1:6379/15',
    )
    expect(redisUrlWithDatabase('redis://:secret@10.0.0.2:6380/0', 15)).toBe(
      'redis://:secret@10.0.0.2:6380/15',
    )
  })
})
