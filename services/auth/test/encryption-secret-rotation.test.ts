// SIGNING_KEY_ENCRYPTION_SECRET rotated as docs/how-to/rotating-secrets.md says — `old`, then `old,new` on every
// instance, then `new,old` (what was stored under `old` is sealed again under `new`), then `new` — on real PostgreSQL,
// with tokens verified and signed every few milliseconds throughout by whichever instances run: none fails. Also the
// list's rules (the first encrypts, each decrypts, a short or repeated secret refused) and the pending security mails
// sealed again by the sender's round.
import { randomUUID } from 'node:crypto'
import { createDatabase, type Sql } from '@meridian/db'
import { ConfigError } from '@meridian/service-kit'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAuthConfig } from '../src/config.ts'
import { createSecurityMailsRepository } from '../src/data/security-mails-repository.ts'
import { createKeyEncryption, encryptionSecretsOf } from '../src/domain/key-encryption.ts'
import { securityMailsToSend } from '../src/domain/security-mail-sender.ts'
import { createSecurityMailSealing } from '../src/domain/security-mails.ts'
import { createKeyRing, type KeyRingTiming, type ManagedKeyRing } from '../src/domain/signing-keys.ts'
import { migrateAuthDatabase } from '../src/migrations.ts'

const oldSecret = 'the-old-secret-for-signing-key-encryption-0001'
const newSecret = 'the-new-secret-for-signing-key-encryption-0002'
const timing: KeyRingTiming = {
  rotationPeriodSeconds: 86_400,
  tokenLifetimeSeconds: 900,
  cacheMarginSeconds: 60,
  checkIntervalMs: 3_600_000,
}

describe('the encryption secret as a list', () => {
  it('when a row was sealed under the old secret, then `new,old` opens it and seals it again under the new one, which alone opens it then', () => {
    const old = createKeyEncryption(oldSecret)
    const rotating = createKeyEncryption(`${newSecret},${oldSecret}`)
    const sealed = old.encrypt('kid-1', Buffer.from('private key'))
    expect(rotating.rotating).toBe(true)
    expect(rotating.decrypt('kid-1', sealed).toString()).toBe('private key')
    const again = rotating.resealed('kid-1', sealed)
    expect(again).not.toBe(sealed)
    expect(
      createKeyEncryption(newSecret)
        .decrypt('kid-1', again ?? '')
        .toString(),
    ).toBe('private key')
    expect(() => old.decrypt('kid-1', again ?? '')).toThrow(/SIGNING_KEY_ENCRYPTION_SECRET/)
    // under the first already: nothing to do
    expect(rotating.resealed('kid-1', again ?? '')).toBeUndefined()
    expect(createKeyEncryption(newSecret).rotating).toBe(false)
  })

  it('when `old,new` is set, then it still encrypts under the old secret, so instances that know only the old one read what it writes', () => {
    const sealed = createKeyEncryption(`${oldSecret},${newSecret}`).encrypt('kid-2', Buffer.from('x'))
    expect(createKeyEncryption(oldSecret).decrypt('kid-2', sealed).toString()).toBe('x')
    // the kid is authenticated: the row cannot be moved to another key
    expect(() => createKeyEncryption(oldSecret).decrypt('kid-3', sealed)).toThrow(/cannot be decrypted/)
  })

  it('when a secret of the list is short or named twice, then the configuration is refused naming the variable and no secret', () => {
    expect(() => encryptionSecretsOf(`${newSecret},short`)).toThrow(/at least 32 characters/)
    expect(() => encryptionSecretsOf(`${newSecret},${newSecret}`)).toThrow(/named twice/)
    for (const value of [`${newSecret},${newSecret}`, `${newSecret},short`, `${newSecret}, ${oldSecret}`]) {
      let refused: unknown
      try {
        loadAuthConfig({ NODE_ENV: 'development', SIGNING_KEY_ENCRYPTION_SECRET: value })
      } catch (error) {
        refused = error
      }
      expect(refused).toBeInstanceOf(ConfigError)
      expect(String((refused as Error).message)).toContain('SIGNING_KEY_ENCRYPTION_SECRET')
      expect(String((refused as Error).message)).not.toContain(newSecret)
    }
    expect(
      loadAuthConfig({ NODE_ENV: 'development', SIGNING_KEY_ENCRYPTION_SECRET: `${newSecret},${oldSecret}` })
        .SIGNING_KEY_ENCRYPTION_SECRET,
    ).toBe(`${newSecret},${oldSecret}`)
  })
})

describe('rotating the encryption secret under traffic', () => {
  let database: TestDatabase
  let sql: Sql
  const rings: ManagedKeyRing[] = []
  beforeAll(async () => {
    database = await freshDatabase('auth-secret-rotation')
    sql = createDatabase(database.url, { applicationName: 'auth-secret-rotation-test' })
    await migrateAuthDatabase(sql)
  })
  afterAll(async () => {
    for (const ring of rings) ring.stop()
    await sql.end({ timeout: 5 })
    await database.drop()
  })

  const started = async (encryptionSecret: string) => {
    const ring = createKeyRing({ sql, encryptionSecret, timing })
    rings.push(ring)
    await ring.start()
    return ring
  }
  const sealedRows = async () =>
    sql<{ kid: string; privateKeyEncrypted: string }[]>`select kid, private_key_encrypted from signing_keys`
  const token = async (ring: ManagedKeyRing) => {
    const { kid, privateKey } = ring.signingKey()
    return new SignJWT({ sub: randomUUID() })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey)
  }
  const verified = async (ring: ManagedKeyRing, jwt: string) => {
    const { kid } = decodeProtectedHeader(jwt)
    const key = await ring.verificationKey(String(kid))
    if (!key) throw new Error(`no key ${kid}`)
    await jwtVerify(jwt, key)
  }

  it('when the instances move from `old` to `old,new`, `new,old` and `new`, then every token signed before and during is verified by each, none fails, and the keys end sealed under the new secret alone', async () => {
    const first = await started(oldSecret)
    const before = await token(first)
    let live: ManagedKeyRing[] = [first]
    let requests = 0
    const failures: string[] = []
    let running = true
    // the traffic: each live instance signs a token and every live instance verifies it, and the one from before
    const traffic = (async () => {
      while (running) {
        for (const signer of live) {
          const jwt = await token(signer)
          for (const verifier of live) {
            for (const each of [jwt, before]) {
              requests += 1
              await verified(verifier, each).catch((error: unknown) => failures.push(String(error)))
            }
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    /** Waits until the traffic made `more` requests from now, whatever the machine's speed. */
    const requestsMade = async (more: number) => {
      const until = requests + more
      while (requests < until) await new Promise((resolve) => setTimeout(resolve, 2))
    }
    const step = async (secret: string) => {
      const ring = await started(secret)
      // a rolling restart: the new instance serves beside the one it replaces (each signs and verifies the other's
      // tokens: 8 requests are two rounds of both), then the old one stops
      live = [...live, ring]
      const replaced = live[0]
      await requestsMade(8)
      replaced?.stop()
      live = live.slice(1)
      return ring
    }

    // step 1: every instance accepts the new secret; the old one still encrypts
    await step(`${oldSecret},${newSecret}`)
    // each key still opens under the old secret alone: the same private key the instances loaded
    const privateKeys = new Map<string, Buffer>()
    for (const row of await sealedRows()) {
      const opened = createKeyEncryption(oldSecret).decrypt(row.kid, row.privateKeyEncrypted)
      expect(opened.length).toBeGreaterThan(1000)
      privateKeys.set(row.kid, opened)
    }
    // step 2: the new one encrypts, and what the old one sealed is sealed again at start
    await step(`${newSecret},${oldSecret}`)
    const rows = await sealedRows()
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      // sealed again, the same key: what opened under the old secret opens under the new one
      const before = privateKeys.get(row.kid)
      if (before)
        expect(createKeyEncryption(newSecret).decrypt(row.kid, row.privateKeyEncrypted)).toEqual(before)
      else
        expect(
          createKeyEncryption(newSecret).decrypt(row.kid, row.privateKeyEncrypted).length,
        ).toBeGreaterThan(1000)
      expect(() => createKeyEncryption(oldSecret).decrypt(row.kid, row.privateKeyEncrypted)).toThrow()
    }
    // step 3: the old secret leaves the list
    const last = await step(newSecret)
    running = false
    await traffic
    expect(failures).toEqual([])
    // three steps, each after at least 8 requests with both instances live
    expect(requests).toBeGreaterThanOrEqual(3 * 8)
    await verified(last, before)
  })

  it('when a security mail waits under the old secret, then a round of the sender under `new,old` seals it again under the new one, and a mail sent meanwhile is left as it is', async () => {
    const [user] = await sql<{ id: string }[]>`
      insert into users (name, email, password_hash) values ('Rotation', ${`${randomUUID()}@example.com`}, 'x')
      returning id`
    const repository = createSecurityMailsRepository(sql)
    const oldSealing = createSecurityMailSealing(oldSecret)
    const waiting = oldSealing.prepare(
      'password_reset',
      { resetUrl: 'https://shop.example.com/r#t', expiresInMinutes: 30 },
      ['resetUrl'],
    )
    const sent = oldSealing.prepare(
      'password_reset',
      { resetUrl: 'https://shop.example.com/s#t', expiresInMinutes: 30 },
      ['resetUrl'],
    )
    for (const mail of [waiting, sent]) await repository.enqueueFor(user?.id ?? '', mail)
    await repository.markSent(sent.id, '<sent@example.com>')

    const rotating = createSecurityMailSealing(`${newSecret},${oldSecret}`)
    const round = securityMailsToSend({
      mails: repository,
      expiring: [],
      sealing: rotating,
      from: 'shop@example.com',
    })
    const housekept = await round.afterRound?.()
    expect(housekept?.resealed).toBeGreaterThanOrEqual(1)
    const [row] = await sql<
      { sealedData: string }[]
    >`select sealed_data from security_mails where id = ${waiting.id}`
    const unsealed = createSecurityMailSealing(newSecret).unseal({
      id: waiting.id,
      data: {},
      sealedData: row?.sealedData ?? null,
    })
    expect(unsealed).toEqual({ resetUrl: 'https://shop.example.com/r#t' })
    const [finished] = await sql<
      { sealedData: string | null }[]
    >`select sealed_data from security_mails where id = ${sent.id}`
    expect(finished?.sealedData).toBeNull()
    // a second round finds nothing left under the old secret
    expect((await round.afterRound?.())?.resealed).toBe(0)
  })
})
