// Revocations are durable: written in the transaction of the change that takes rights away, delivered to Redis (the
// key and announcement every service follows) right after the commit, and by a round until delivered — a Redis
// outage or a crash between the commit and the delivery only delays it, and a rolled-back change revokes nothing.
import { authNames } from '@meridian/contracts'
import { createDatabase, transaction } from '@meridian/db'
import { type CredentialRevocations, createRedis, followCredentialRevocations } from '@meridian/service-kit'
import {
  captureLogs,
  eventually,
  freshDatabase,
  infraEndpoints,
  type RedisRelay,
  serviceTestEnv,
  startRedisRelay,
} from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, createConfiguredKeyRing, loadAuthConfig, migrateAuthDatabase } from '../src/app.ts'
import { createAdmin } from '../src/create-admin-command.ts'
import { createCredentialRevocationsRepository } from '../src/data/credential-revocations-repository.ts'
import { createCredentialRevocationsStore } from '../src/data/credential-revocations-store.ts'
import { createProviderAccounts } from '../src/data/oidc-payloads.ts'
import { createRefreshTokensRepository } from '../src/data/refresh-tokens-repository.ts'
import { createCredentialRevoker } from '../src/domain/credential-revocation.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, signedIn } from './identities.ts'

const roundEnv = { REVOCATION_DELIVERY_INTERVAL_MS: '100' }
const json = { 'content-type': 'application/json' }

interface RevocationRow {
  userId: string
  revokedBefore: Date
  until: Date
  deliveredAt: Date | null
}

const revocationsOf = (sql: AuthTestApp['sql'], userId: string) =>
  sql<RevocationRow[]>`
    select user_id::text as user_id, revoked_before, until, delivered_at
    from credential_revocations where user_id = ${userId} order by id`

const storedInRedis = async (redis: Redis, userId: string) =>
  JSON.parse((await redis.get(`${authNames.revocationKeyPrefix}${userId}`)) ?? 'null') as {
    revokedBefore: number
  } | null

describe('durable credential revocations', () => {
  let relay: RedisRelay
  let publisher: Redis
  let auth: AuthTestApp
  /** another service's view: it follows the revocations in Redis, as every service's auth plugin does */
  let follower: CredentialRevocations
  let followerRedis: Redis
  let root: { authorization: string }

  beforeAll(async () => {
    relay = await startRedisRelay()
    publisher = createRedis(relay.url, { connectionName: 'auth-revocations-through-relay' })
    // the outage's connection errors are expected: what matters is what the app does about them
    publisher.on('error', () => {})
    auth = await buildAuthTestApp(roundEnv, { revocationRedis: publisher })
    followerRedis = new Redis(infraEndpoints().redisUrl)
    follower = await followCredentialRevocations({ redis: followerRedis, logger: auth.app.log })
    root = bearerFor(auth, { role: 'admin' })
  })
  afterAll(async () => {
    await follower?.close()
    followerRedis?.disconnect()
    await auth?.close()
    publisher?.disconnect()
    await relay?.close()
  })

  const change = (userId: string, payload: Record<string, unknown>) =>
    auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${userId}`,
      headers: { ...root, ...json },
      payload,
    })
  const readSelf = (session: { user: { id: string }; headers: { authorization: string } }) =>
    auth.app.inject({ method: 'GET', url: `/api/v1/users/${session.user.id}`, headers: session.headers })

  it('when a change takes rights away, then its revocation is written with it and delivered at once', async () => {
    const user = await signedIn(auth)
    expect((await change(user.user.id, { role: 'admin' })).statusCode).toBe(200)

    const [row, ...more] = await revocationsOf(auth.sql, user.user.id)
    expect(more).toEqual([])
    expect(row?.deliveredAt).not.toBeNull()
    expect((await storedInRedis(auth.redis, user.user.id))?.revokedBefore).toBe(row?.revokedBefore.getTime())
    await eventually(
      'the follower hears of it',
      () => follower.revokedBefore(user.user.id) > 0,
      undefined,
      20,
    )
  })

  it('when Redis refuses the delivery, then the change stands, this instance refuses the old token at once, and the first round after the outage delivers it to every service', async () => {
    const user = await signedIn(auth)
    relay.begin()
    try {
      const suspended = await change(user.user.id, { status: 'suspended' })
      expect(suspended.statusCode).toBe(200)
      expect(suspended.json().status).toBe('suspended')
      // applied in this instance without Redis
      expect((await readSelf(user)).statusCode).toBe(401)
      const [pending] = await revocationsOf(auth.sql, user.user.id)
      expect(pending?.deliveredAt).toBeNull()
      expect(await storedInRedis(auth.redis, user.user.id)).toBeNull()
      expect(follower.revokedBefore(user.user.id)).toBe(0)
      // rounds keep failing while the outage lasts, and keep the revocation
      await eventually(
        'a round has failed',
        () => auth.logs.some((line) => String(line.msg).startsWith('credential revocations: a round failed')),
        undefined,
        50,
      )
      expect((await revocationsOf(auth.sql, user.user.id))[0]?.deliveredAt).toBeNull()
    } finally {
      relay.end()
    }

    await eventually(
      'the revocation reaches the follower',
      () => follower.revokedBefore(user.user.id) > 0,
      undefined,
      50,
    )
    const [delivered] = await revocationsOf(auth.sql, user.user.id)
    expect(follower.revokedBefore(user.user.id)).toBe(delivered?.revokedBefore.getTime())
    expect((await storedInRedis(auth.redis, user.user.id))?.revokedBefore).toBe(
      delivered?.revokedBefore.getTime(),
    )
    await eventually(
      'the row is marked delivered',
      async () => (await revocationsOf(auth.sql, user.user.id))[0]?.deliveredAt != null,
      undefined,
      50,
    )
  })

  it('when Redis comes back without a revocation it had taken (a replica promoted before it copied it), then auth delivers every revocation in force again as it reconnects', async () => {
    const user = await signedIn(auth)
    expect((await change(user.user.id, { role: 'admin' })).statusCode).toBe(200)
    const [row] = await revocationsOf(auth.sql, user.user.id)
    expect(row?.deliveredAt).not.toBeNull()
    const revokedBefore = row?.revokedBefore.getTime()
    // what the promoted replica lacks: the stored revocation (the row says delivered, so no round would send it)
    await auth.redis.del(`${authNames.revocationKeyPrefix}${user.user.id}`)
    // the failover as auth's client lives it: its connection is cut, and it connects again (here, to the same server)
    relay.begin()
    relay.end()
    await eventually(
      'the revocation is stored again',
      async () => (await storedInRedis(auth.redis, user.user.id))?.revokedBefore === revokedBefore,
      undefined,
      50,
    )
    // a service that starts after the failover reads it from Redis
    const lateRedis = new Redis(infraEndpoints().redisUrl)
    const late = await followCredentialRevocations({ redis: lateRedis, logger: auth.app.log })
    try {
      expect(late.revokedBefore(user.user.id)).toBe(revokedBefore)
    } finally {
      await late.close()
      lateRedis.disconnect()
    }
    expect((await revocationsOf(auth.sql, user.user.id))[0]?.deliveredAt).not.toBeNull()
  })

  it('when create-admin cannot reach Redis, then the promotion stands and the running auth delivers its revocation', async () => {
    const user = await signedIn(auth)
    expect((await readSelf(user)).statusCode).toBe(200)
    relay.begin()
    const lines: string[] = []
    try {
      const outcome = await createAdmin({
        databaseUrl: auth.database.url,
        redisUrl: relay.url,
        email: user.user.email,
        password: async () => {
          throw new Error('no password should be asked for')
        },
        log: (line) => lines.push(line),
      })
      expect(outcome.action).toBe('promoted')
    } finally {
      relay.end()
    }
    expect(lines.join('\n')).toContain('the running auth delivers it')
    // the running auth's round finds it in the database: its own instance and the followers refuse the old token
    await eventually(
      'the running auth refuses the old token',
      async () => (await readSelf(user)).statusCode === 401,
    )
    await eventually(
      'the follower hears of it',
      () => follower.revokedBefore(user.user.id) > 0,
      undefined,
      20,
    )
  })

  it('when the transaction of the change rolls back, then nothing is revoked: no revocation, refresh tokens and provider rows intact', async () => {
    const user = await signedIn(auth)
    await auth.sql`
      insert into oidc_payloads (model, id, payload, account_id)
      values ('Session', ${`session-${user.user.id}`}, ${auth.sql.json({ accountId: user.user.id })}, ${user.user.id})`
    const revoker = createCredentialRevoker({
      sql: auth.sql,
      revocations: createCredentialRevocationsRepository(auth.sql),
      store: createCredentialRevocationsStore(auth.redis),
      refreshTokens: createRefreshTokensRepository(auth.sql),
      providerAccounts: createProviderAccounts(auth.sql),
      keepForMs: 60_000,
    })

    const failure = new Error('the change failed after the revocation was written')
    await expect(
      transaction(auth.sql, async (tx) => {
        await revoker.revokeWithin(tx, user.user.id)
        throw failure
      }),
    ).rejects.toBe(failure)

    expect(await revocationsOf(auth.sql, user.user.id)).toEqual([])
    const [tokens] = await auth.sql<{ live: number }[]>`
      select count(*)::int as live from refresh_tokens where user_id = ${user.user.id} and revoked_at is null`
    expect(tokens?.live).toBe(1)
    const [provider] = await auth.sql<{ rows: number }[]>`
      select count(*)::int as rows from oidc_payloads where account_id = ${user.user.id}`
    expect(provider?.rows).toBe(1)
    expect((await readSelf(user)).statusCode).toBe(200)
  })

  it('when a revocation has lapsed (everything it voided has expired), then a round deletes it, delivered or not', async () => {
    const [user] = await auth.sql<{ id: string }[]>`select gen_random_uuid()::text as id`
    const userId = user?.id ?? ''
    await auth.sql`
      insert into credential_revocations (user_id, revoked_before, until)
      values (${userId}, now() - interval '2 hours', now() - interval '1 hour')`
    await eventually('a round deletes it', async () => (await revocationsOf(auth.sql, userId)).length === 0)
    // lapsed: never delivered (it would void nothing)
    expect(await storedInRedis(auth.redis, userId)).toBeNull()
  })

  it('when an older revocation is delivered after a newer one (a late re-delivery), then Redis keeps the newer one', async () => {
    const store = createCredentialRevocationsStore(auth.redis)
    const [user] = await auth.sql<{ id: string }[]>`select gen_random_uuid()::text as id`
    const userId = user?.id ?? ''
    const now = Date.now()
    expect(await store.publish({ userId, revokedBefore: now, until: now + 60_000 })).toBe(true)
    expect(await store.publish({ userId, revokedBefore: now - 5000, until: now + 55_000 })).toBe(false)
    expect((await storedInRedis(auth.redis, userId))?.revokedBefore).toBe(now)
    expect(await auth.redis.pttl(`${authNames.revocationKeyPrefix}${userId}`)).toBeGreaterThan(50_000)
    // the same one again (at least once): stored and announced again, harmless
    expect(await store.publish({ userId, revokedBefore: now, until: now + 60_000 })).toBe(true)
  })
})

describe('durable credential revocations across a restart', () => {
  it('when the app closes before delivering a committed revocation, then the next app on the same database delivers it', async () => {
    const database = await freshDatabase('auth_restart')
    const relay = await startRedisRelay()
    const redis = new Redis(infraEndpoints().redisUrl)
    const sql = createDatabase(database.url, { applicationName: 'auth-test' })
    const config = loadAuthConfig({ ...serviceTestEnv(), DATABASE_URL: database.url, ...roundEnv })
    const running = new Set<{ close(): Promise<void> }>()
    /** auth as main.ts builds it, on this database, delivering revocations to `revocationRedis` */
    const startAuth = async (revocationRedis: Redis) => {
      const keyRing = createConfiguredKeyRing(config, sql)
      await keyRing.start()
      const app = await buildApp({
        config,
        sql,
        redis,
        keyRing,
        revocationRedis,
        logStream: captureLogs().stream,
      })
      await app.ready()
      const instance = {
        app,
        keyRing,
        async close() {
          running.delete(instance)
          await app.close()
          keyRing.stop()
        },
      }
      running.add(instance)
      return instance
    }
    const unreachable = createRedis(relay.url, { connectionName: 'auth-before-restart' })
    unreachable.on('error', () => {})
    try {
      await migrateAuthDatabase(sql)
      relay.begin()
      const before = await startAuth(unreachable)
      const [user] = await sql<{ id: string }[]>`
        insert into users (name, email, password_hash, role, status)
        values ('Restart Person', ${`restart.${Date.now()}@example.com`}, null, 'user', 'invited')
        returning id::text as id`
      const userId = user?.id ?? ''
      const removed = await before.app.inject({
        method: 'DELETE',
        url: `/api/v1/users/${userId}`,
        headers: bearerFor({ config, keyRing: before.keyRing }, { role: 'admin' }),
      })
      expect(removed.statusCode).toBe(204)
      // committed, not delivered: the app goes away before any round could deliver it
      await before.close()
      const [pending] = await revocationsOf(sql, userId)
      expect(pending?.deliveredAt).toBeNull()
      expect(await storedInRedis(redis, userId)).toBeNull()

      const after = await startAuth(redis)
      await eventually('the new app delivers it', async () => (await storedInRedis(redis, userId)) !== null)
      const [delivered] = await revocationsOf(sql, userId)
      expect((await storedInRedis(redis, userId))?.revokedBefore).toBe(delivered?.revokedBefore.getTime())
      await eventually(
        'the row is marked delivered',
        async () => (await revocationsOf(sql, userId))[0]?.deliveredAt != null,
      )
      await after.close()
    } finally {
      for (const instance of [...running]) await instance.close()
      unreachable.disconnect()
      redis.disconnect()
      await relay.close()
      await sql.end({ timeout: 5 })
      await database.drop()
    }
  })
})
