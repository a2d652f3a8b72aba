// The gateway's own audit trail on a real Redis stream: entries read back newest first with their time from the
// stream id, pages that neither skip nor repeat an entry (several appended in one millisecond included), a page of one
// action or actor, and an entry that cannot be appended kept in the log instead.
import type { AuditQuery } from '@meridian/contracts'
import { nextAuditQuery } from '@meridian/service-kit'
import { freshRedis, type TestRedis } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  atOfStreamId,
  type GatewayAuditTrail,
  recordAction,
  redisAuditTrail,
  streamIdBefore,
} from '../src/operations/audit-stream.ts'

const admin = 'user:0b7e1c2a-0000-4000-8000-000000000001'
const operator = 'api-key:9f0e5d7c-0000-4000-8000-000000000002'

describe("the gateway's audit trail (a Redis stream)", () => {
  let store: TestRedis
  let trail: GatewayAuditTrail

  beforeAll(async () => {
    store = freshRedis('gateway-audit')
    trail = redisAuditTrail(store.redis)
    // one after the other, most within a millisecond: the stream's sequence tells them apart
    for (let index = 0; index < 7; index++)
      await trail.append(
        { actor: index % 2 === 0 ? admin : operator, address: '127.0.0.1', requestId: `req-${index}` },
        {
          action: index % 3 === 0 ? 'maintenance.on' : 'dead_letters.replayed',
          target: `n:${index}`,
          detail: { index },
        },
      )
  })

  afterAll(async () => {
    await store?.cleanup()
  })

  it("when a stream id is turned into a time and back, then its sequence is the time's microseconds", () => {
    expect(atOfStreamId('1796000000123-4')).toBe('2026-11-30T00:53:20.123004Z')
    expect(streamIdBefore('2026-11-30T00:53:20.123004Z')).toBe('(1796000000123-4')
    expect(streamIdBefore('2026-11-30T00:53:20Z')).toBe('(1796000000000-0')
    expect(streamIdBefore('2016-12-31T23:59:60Z')).toBe(streamIdBefore('2017-01-01T00:00:00Z'))
    expect(streamIdBefore('0746-10-10T08:26:20.0-11:45')).toBeUndefined()
  })

  it('when the page asked for is before 1970 (the API fuzzing: a 500 from Redis), then it is empty', async () => {
    expect(await trail.read({ limit: 5, before: '0746-10-10T08:26:20.0-11:45' })).toEqual([])
    expect(await trail.read({ limit: 5, before: '1969-12-31T23:59:59.999Z' })).toEqual([])
    expect(await trail.read({ limit: 1, before: '2999-12-31T23:59:60Z' })).toHaveLength(1)
  })

  it('when the trail is read a page at a time, then every entry comes once, newest first, with who, what and from where', async () => {
    const seen: string[] = []
    let query: AuditQuery = { limit: 3 }
    for (;;) {
      const page = await trail.read(query)
      seen.push(...page.map((entry) => entry.target))
      const next = nextAuditQuery(page, query)
      if (next === null) break
      query = { limit: 3, before: new URLSearchParams(next).get('before') ?? '' }
    }
    expect(seen).toEqual(['n:6', 'n:5', 'n:4', 'n:3', 'n:2', 'n:1', 'n:0'])
    const [newest] = await trail.read({ limit: 1 })
    expect(newest).toEqual({
      service: 'gateway',
      id: expect.stringMatching(/^\d+-\d+$/),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      actor: admin,
      action: 'maintenance.on',
      target: 'n:6',
      detail: { index: 6 },
      address: '127.0.0.1',
      requestId: 'req-6',
    })
  })

  it('when a page of one action or one actor is asked, then only theirs come, and the next page goes on from the last', async () => {
    const first = await trail.read({ limit: 2, action: 'maintenance.on' })
    expect(first.map((entry) => entry.target)).toEqual(['n:6', 'n:3'])
    const rest = await trail.read({ limit: 2, action: 'maintenance.on', before: first[1]?.at ?? '' })
    expect(rest.map((entry) => entry.target)).toEqual(['n:0'])
    const theirs = await trail.read({ limit: 10, actor: operator })
    expect(theirs.map((entry) => entry.target)).toEqual(['n:5', 'n:3', 'n:1'])
  })

  it('when the entry cannot be appended (Redis gone), then the log keeps every field of it and the caller goes on', async () => {
    const gone = freshRedis('gateway-audit-gone')
    await gone.redis.quit()
    const logged: unknown[] = []
    const request = {
      ip: '198.18.0.7',
      id: 'req-gone',
      principal: { kind: 'user', subject: '0b7e1c2a-0000-4000-8000-000000000001', roles: ['admin'] },
      log: { error: (fields: unknown) => logged.push(fields) },
    }
    await recordAction(redisAuditTrail(gone.redis), request as never, {
      action: 'maintenance.off',
      target: 'service:order',
    })
    expect(logged).toEqual([
      expect.objectContaining({
        audit: {
          actor: admin,
          address: '198.18.0.7',
          requestId: 'req-gone',
          action: 'maintenance.off',
          target: 'service:order',
        },
      }),
    ])
  })
})
