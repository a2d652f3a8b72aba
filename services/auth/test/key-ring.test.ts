// The signing key ring on real PostgreSQL with a test clock: rotation ahead of use, retirement after the last token
// expired, several instances sharing (and rotating) one set of keys, keys encrypted at rest.
import { createDatabase, type Sql } from '@meridian/db'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKeyRing, type KeyRingTiming, type ManagedKeyRing } from '../src/domain/signing-keys.ts'
import { migrateAuthDatabase } from '../src/migrations.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { signedIn } from './identities.ts'

// rotation every 1000 s; a new key appears 150 s (token lifetime 100 + margin 50) before it signs
const timing: KeyRingTiming = {
  rotationPeriodSeconds: 1000,
  tokenLifetimeSeconds: 100,
  cacheMarginSeconds: 50,
  checkIntervalMs: 3_600_000,
}
const secret = 'a-test-secret-for-signing-key-encryption'

function testClock(start = Date.now()) {
  let now = start
  return {
    now: () => now,
    advance(seconds: number) {
      now += seconds * 1000
    },
  }
}

describe('key ring', () => {
  let database: TestDatabase
  let sql: Sql
  const rings: ManagedKeyRing[] = []
  beforeAll(async () => {
    database = await freshDatabase('auth-keys')
    sql = createDatabase(database.url, { applicationName: 'auth-key-ring-test' })
    await migrateAuthDatabase(sql)
  })
  afterAll(async () => {
    for (const ring of rings) ring.stop()
    await sql.end({ timeout: 5 })
    await database.drop()
  })

  const ring = (clock: () => number, encryptionSecret = secret) => {
    const created = createKeyRing({ sql, encryptionSecret, timing, clock })
    rings.push(created)
    return created
  }
  const kids = (keyRing: ManagedKeyRing) => keyRing.publicJwks().keys.map((key) => String(key.kid))
  const storedKeys = async () => Number((await sql`select count(*)::int as n from signing_keys`)[0]?.n)

  it('when a key is due, then the next one is published 150 s before it signs; the old one verifies until its tokens expired, then leaves', async () => {
    await sql`delete from signing_keys`
    const clock = testClock()
    const keys = ring(clock.now)
    let changes = 0
    keys.onChange(() => {
      changes++
    })
    await keys.start()
    const first = keys.signingKey().kid
    expect(kids(keys)).toEqual([first])

    clock.advance(849)
    await keys.refresh()
    expect(kids(keys)).toEqual([first])

    clock.advance(1) // 150 s before the first key's period ends
    await keys.refresh()
    const published = kids(keys)
    expect(published).toHaveLength(2)
    const next = published.find((kid) => kid !== first) ?? ''
    expect(keys.signingKey().kid).toBe(first)
    expect(await keys.verificationKey(next)).toBeDefined()
    expect(changes).toBe(1)
    // the current key first, with its private part, for the OIDC provider
    expect(keys.privateJwks().map((jwk) => jwk.kid)).toEqual([first, next])
    expect(keys.privateJwks()[0]).toMatchObject({
      kty: 'RSA',
      alg: 'RS256',
      use: 'sig',
      d: expect.any(String),
    })

    clock.advance(150) // the period ends: the next key signs
    await keys.refresh()
    expect(keys.signingKey().kid).toBe(next)
    expect(kids(keys)).toEqual([next, first])
    expect(await keys.verificationKey(first)).toBeDefined()
    expect(changes).toBe(2)

    clock.advance(149) // a token signed just before the switch may still be valid
    await keys.refresh()
    expect(await keys.verificationKey(first)).toBeDefined()

    clock.advance(1) // token lifetime + margin after retirement: gone from the JWKS and the database
    await keys.refresh()
    expect(kids(keys)).toEqual([next])
    expect(await keys.verificationKey(first)).toBeUndefined()
    expect(await storedKeys()).toBe(1)
  })

  it('when two instances start and rotate at the same moment, then one key is created each time and both see the same keys', async () => {
    await sql`delete from signing_keys`
    const clock = testClock()
    const a = ring(clock.now)
    const b = ring(clock.now)
    await Promise.all([a.start(), b.start()])
    expect(await storedKeys()).toBe(1)
    expect(a.signingKey().kid).toBe(b.signingKey().kid)

    clock.advance(900)
    await Promise.all([a.refresh(), b.refresh(), a.refresh(), b.refresh()])
    expect(await storedKeys()).toBe(2)
    expect(kids(a).sort()).toEqual(kids(b).sort())

    clock.advance(100)
    expect(a.signingKey().kid).toBe(b.signingKey().kid)
  })

  it('when another instance added a key this one has not loaded yet, then verificationKey finds it by reloading', async () => {
    await sql`delete from signing_keys`
    const clock = testClock()
    const a = ring(clock.now)
    const c = ring(clock.now)
    await a.start()
    await c.start()
    clock.advance(900)
    await a.refresh()
    const added = kids(a).find((kid) => kid !== a.signingKey().kid) ?? ''
    expect(kids(c)).not.toContain(added)
    expect(await c.verificationKey(added)).toBeDefined()
    expect(kids(c)).toContain(added)
    expect(await c.verificationKey('no-such-kid')).toBeUndefined()
  })

  it('when the encryption secret is not the one the keys were stored with, then start fails naming the secret', async () => {
    await sql`delete from signing_keys`
    await ring(Date.now).start()
    await expect(ring(Date.now, 'some-other-secret-that-is-long-enough').start()).rejects.toThrow(
      /SIGNING_KEY_ENCRYPTION_SECRET/,
    )
  })
})

describe('key rotation seen through the API', () => {
  const clock = testClock()
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp(
      {},
      { keyRing: (sql) => createKeyRing({ sql, encryptionSecret: secret, timing, clock: clock.now }) },
    )
  })
  afterAll(async () => {
    await auth.close()
  })

  const readSelf = (userId: string, accessToken: string) =>
    auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${userId}`,
      headers: { authorization: `Bearer ${accessToken}` },
    })
  const jwksKids = async () =>
    (await auth.app.inject({ method: 'GET', url: '/.well-known/jwks.json' }))
      .json()
      .keys.map((key: { kid: string }) => key.kid)

  it('when the key rotates, then the JWKS has the next key before it signs, new logins use it, and tokens of the old key keep working until it is retired', async () => {
    const before = await signedIn(auth)
    const oldKid = decodeProtectedHeader(before.accessToken).kid
    expect(await jwksKids()).toEqual([oldKid])

    clock.advance(860)
    await auth.keyRing.refresh()
    const published = await jwksKids()
    expect(published).toHaveLength(2)
    const nextKid = published.find((kid: string) => kid !== oldKid)
    // published, not yet signing
    expect(decodeProtectedHeader((await signedIn(auth)).accessToken).kid).toBe(oldKid)

    clock.advance(150)
    await auth.keyRing.refresh()
    const after = await signedIn(auth)
    expect(decodeProtectedHeader(after.accessToken).kid).toBe(nextKid)
    expect((await readSelf(before.user.id, before.accessToken)).statusCode).toBe(200)
    expect((await readSelf(after.user.id, after.accessToken)).statusCode).toBe(200)

    clock.advance(150)
    await auth.keyRing.refresh()
    expect(await jwksKids()).toEqual([nextKid])
    expect((await readSelf(before.user.id, before.accessToken)).statusCode).toBe(401)
    expect((await readSelf(after.user.id, after.accessToken)).statusCode).toBe(200)
  })
})
