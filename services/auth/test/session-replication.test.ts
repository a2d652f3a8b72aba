// A new cookie session is held by a replica before the login answers (SESSION_WAIT_REPLICAS: Redis' WAIT), so that a
// failover right after it keeps the customer signed in; a replica down delays a login by the wait at most, and says
// so. On a real primary and replica (infra's startRedisSentinelSet, Debian's redis-server).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { authNames, type SessionRecord } from '@meridian/contracts'
import { freePort } from '@meridian/infra'
import { type RedisSentinelSet, startRedisSentinelSet } from '@meridian/infra/redis-sentinel'
import { eventually, serviceTestEnv } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAuthConfig, sessionReplication } from '../src/config.ts'
import { createSessionStore } from '../src/data/session-store.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-auth-replication-'))
const localhost = '127.0.0.1'
let set: RedisSentinelSet
let primary: Redis
let replica: Redis

const record = (): SessionRecord => ({
  userId: randomUUID(),
  role: 'user',
  createdAt: new Date().toISOString(),
})

beforeAll(async () => {
  const address = async () => ({ host: localhost, port: await freePort() })
  const primaryAddress = await address()
  const replicaAddress = await address()
  set = await startRedisSentinelSet({
    dir,
    primary: primaryAddress,
    replica: replicaAddress,
    sentinels: [await address(), await address(), await address()],
    // no failover here: the replica is stopped below, the primary never
    downAfterMs: 30_000,
  })
  primary = new Redis(primaryAddress)
  replica = new Redis({ ...replicaAddress, maxRetriesPerRequest: 0 })
  replica.on('error', () => {}) // its death is expected below
})

afterAll(async () => {
  primary?.disconnect()
  replica?.disconnect()
  await set?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** A session store on the primary waiting for one replica up to `timeoutMs`, and the shortfalls it told. */
function storeTelling(timeoutMs: number) {
  const told: number[][] = []
  const store = createSessionStore(primary, {
    replicas: 1,
    timeoutMs,
    unreplicated: (acknowledged, asked) => told.push([acknowledged, asked]),
  })
  return { store, told }
}

describe('cookie sessions on a replica before the login answers', () => {
  it('when SESSION_WAIT_REPLICAS is unset, then a login waits for one replica with sentinels and for none without; a value given wins', () => {
    const env = serviceTestEnv()
    expect(sessionReplication(loadAuthConfig(env))).toEqual({ replicas: 0, timeoutMs: 500 })
    const sentinels = { ...env, REDIS_SENTINELS: '127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381' }
    expect(sessionReplication(loadAuthConfig(sentinels))).toEqual({ replicas: 1, timeoutMs: 500 })
    expect(
      sessionReplication(
        loadAuthConfig({ ...sentinels, SESSION_WAIT_REPLICAS: '0', SESSION_WAIT_TIMEOUT_MS: '250' }),
      ),
    ).toEqual({ replicas: 0, timeoutMs: 250 })
    expect(() => loadAuthConfig({ ...env, SESSION_WAIT_REPLICAS: '10' })).toThrow(/SESSION_WAIT_REPLICAS/)
  })

  it('when a session is made on a primary with a replica, then the replica holds it as soon as create resolves', async () => {
    const { store, told } = storeTelling(5000)
    const id = await store.create(record(), 60)
    expect(await replica.get(`${authNames.sessionKeyPrefix}${id}`)).not.toBeNull()
    expect(told).toEqual([])
  })

  it('when the replica is gone, then a session is still made, after the wait, and the shortfall is told', async () => {
    process.kill(set.pids.replica, 'SIGKILL')
    await eventually('the primary to count no replica', async () =>
      /connected_slaves:0/.test(await primary.info('replication')),
    )
    const { store, told } = storeTelling(200)
    const id = await store.create(record(), 60)
    expect(await primary.get(`${authNames.sessionKeyPrefix}${id}`)).not.toBeNull()
    expect(told).toEqual([[0, 1]])
  })
})
