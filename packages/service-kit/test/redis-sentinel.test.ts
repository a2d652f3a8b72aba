// The services' Redis client through sentinels (REDIS_SENTINELS, REDIS_NAME), on a real set: a primary, a replica and
// three sentinels (infra's startRedisSentinelSet, Debian's redis-server). The primary's process is killed: the
// sentinels promote the replica, and the same client — and a subscriber made from it, as the chassis makes its
// revocation follower and the realtime gateway its adapter's — goes on with the new primary: what was written and
// acknowledged by the replica before is there, writes succeed, and a message published after reaches the subscriber.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@meridian/infra'
import { type RedisSentinelSet, startRedisSentinelSet } from '@meridian/infra/redis-sentinel'
import { eventually } from '@meridian/testkit'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, ServiceEnv } from '../src/config.ts'
import { createRedis, sentinelAddresses } from '../src/index.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-kit-sentinel-'))
let set: RedisSentinelSet
const clients: Redis[] = []

const localhost = '127.0.0.1'
const address = async () => ({ host: localhost, port: await freePort() })

beforeAll(async () => {
  set = await startRedisSentinelSet({
    dir,
    primary: await address(),
    replica: await address(),
    sentinels: [await address(), await address(), await address()],
    // called down after 3 s without an answer (long enough that a loaded machine does not fail over by itself before
    // the kill below): the failover comes within seconds of it
    downAfterMs: 3000,
    failoverTimeoutMs: 10_000,
  })
})

afterAll(async () => {
  for (const client of clients) client.disconnect()
  await set?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** A client as a service makes it: its REDIS_URL (credentials and scheme only) and the sentinel variables. */
function serviceClient(): Redis {
  const client = createRedis('redis://unused.invalid:6379/0', {
    connectionName: 'sentinel-test',
    sentinel: { REDIS_SENTINELS: set.sentinelsVariable, REDIS_NAME: set.name },
  })
  client.on('error', () => {}) // a lost primary is expected below
  clients.push(client)
  return client
}

describe('a service’s Redis through the sentinels', () => {
  it('when the primary’s process dies, then the replica is promoted and the client, and a subscriber made from it, go on with what was acknowledged', async () => {
    const client = serviceClient()
    const key = `sentinel-test:${randomUUID()}`
    await client.set(key, 'before the failover')
    // acknowledged by the replica: what survives the primary's death
    expect(await client.call('WAIT', '1', '5000')).toBe(1)
    const subscriber = client.duplicate()
    subscriber.on('error', () => {})
    clients.push(subscriber)
    const heard: string[] = []
    subscriber.on('message', (_channel: string, message: string) => heard.push(message))
    await subscriber.subscribe('sentinel-test')

    const before = await set.primaryAddress()
    process.kill(set.pids.primary, 'SIGKILL')

    await eventually('the sentinels to name another primary', async () => {
      const now = await set.primaryAddress()
      return now.port !== before.port
    })
    // the client finds the new primary by itself: a write succeeds there, and the earlier write is there
    await eventually('a write through the same client to succeed', async () => {
      try {
        return (await client.set(`${key}:after`, 'after the failover')) === 'OK'
      } catch {
        return false
      }
    })
    expect(await client.get(key)).toBe('before the failover')
    expect(await client.get(`${key}:after`)).toBe('after the failover')
    expect(await client.info('replication')).toMatch(/role:master/)

    // the subscriber is subscribed again on the new primary: a message published now reaches it
    await eventually('a message published after the failover to reach the subscriber', async () => {
      await client.publish('sentinel-test', 'after the failover')
      return heard.includes('after the failover')
    })
  })
})

describe('REDIS_SENTINELS', () => {
  const base = {
    NODE_ENV: 'test',
    PORT: '3000',
    DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/d',
    REDIS_URL: 'redis://127.0.0.1:6379',
  }

  it('when it lists host:port entries, then each is a sentinel (an IPv6 address in brackets) and REDIS_NAME defaults to meridian', () => {
    const config = loadConfig(ServiceEnv, {
      ...base,
      REDIS_SENTINELS: 'a.example:26379,198.18.0.5:1,[::1]:26380',
    })
    expect(config.REDIS_NAME).toBe('meridian')
    expect(sentinelAddresses(config.REDIS_SENTINELS ?? '')).toEqual([
      { host: 'a.example', port: 26379 },
      { host: '198.18.0.5', port: 1 },
      { host: '::1', port: 26380 },
    ])
  })

  it('when an entry has no port, ten are listed, or REDIS_NAME has a space, then the configuration is refused naming the variable', () => {
    for (const env of [
      { REDIS_SENTINELS: 'a.example' },
      { REDIS_SENTINELS: 'a:1,b' },
      { REDIS_SENTINELS: Array.from({ length: 10 }, (_, i) => `h${i}:1`).join(',') },
      { REDIS_SENTINELS: 'a:1', REDIS_NAME: 'my master' },
    ]) {
      expect(() => loadConfig(ServiceEnv, { ...base, ...env })).toThrow(ConfigError)
      expect(() => loadConfig(ServiceEnv, { ...base, ...env })).toThrow(/REDIS_(SENTINELS|NAME)/)
    }
  })
})
