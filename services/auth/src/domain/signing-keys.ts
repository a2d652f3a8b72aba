// The RSA key ring every auth instance shares through PostgreSQL: which key signs now, which keys are published, and
// the rotation that adds the next key well before it signs and keeps a retired one until its tokens have expired.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto'
import { promisify } from 'node:util'
import type { Sql, TransactionSql } from '@meridian/db'
import {
  createSigningKeysRepository,
  type SigningKeysRepository,
  type StoredSigningKey,
} from '../data/signing-keys-repository.ts'
import { createKeyEncryption, type KeyEncryption } from './key-encryption.ts'

export interface KeyRing {
  /** RSA key new RS256 tokens are signed with: kid + private KeyObject */
  signingKey(): { kid: string; privateKey: KeyObject }
  /** the public JWKS to publish: the next key (published before it signs), the current one, and retired ones until every token they signed has expired */
  publicJwks(): { keys: JsonWebKey[] }
  /** private JWKs (RSA, with kid, alg RS256, use sig), the current signing key FIRST: the OIDC provider signs ID tokens with them */
  privateJwks(): JsonWebKey[]
  /** verification key by kid (any published key), undefined when unknown */
  verificationKey(kid: string): Promise<KeyObject | undefined>
  /** listener called after the set of keys changed (rotation) */
  onChange(listener: () => void): void
  /** loads/creates keys; starts the rotation timer; stop() clears it */
  start(): Promise<void>
  stop(): void
}

/** The key ring plus what its owner (main.ts, tests) may also do: run a rotation check now. */
export interface ManagedKeyRing extends KeyRing {
  /** rotates if due, removes keys whose tokens have all expired, reloads keys other instances added */
  refresh(): Promise<void>
}

export interface KeyRingTiming {
  /** how long one key signs before the next takes over */
  rotationPeriodSeconds: number
  /** the longest lifetime of any token signed with these keys (access tokens, OpenID Connect ID tokens) */
  tokenLifetimeSeconds: number
  /**
   * how long a verifier may still hold an older JWKS: the JWKS max-age, the reload interval of auth instances and
   * some clock skew. A new key is published tokenLifetime + cacheMargin before it signs; a retired one stays as long.
   */
  cacheMarginSeconds: number
  /** how often each instance checks for rotation and reloads the keys (must be well below the margin) */
  checkIntervalMs: number
}

export interface KeyRingLogger {
  info(details: object, message: string): void
  error(details: object, message: string): void
}

export interface KeyRingOptions {
  sql: Sql
  /** SIGNING_KEY_ENCRYPTION_SECRET */
  encryptionSecret: string
  timing: KeyRingTiming
  /** milliseconds since the epoch; tests move time with it */
  clock?: () => number
  logger?: KeyRingLogger
}

/** The keys at a moment: the one that signs, and those a verifier accepts (by kid too). */
interface KeyView {
  current: LoadedKey | undefined
  published: LoadedKey[]
  byKid: ReadonlyMap<string, KeyObject>
}

interface LoadedKey {
  kid: string
  activatesAt: number
  publicKey: KeyObject
  privateKey: KeyObject
  publicJwk: JsonWebKey
  privateJwk: JsonWebKey
}

const generateRsaKeyPair = promisify(generateKeyPair)
const signatureUse = { alg: 'RS256', use: 'sig' } as const

/** RFC 7638 thumbprint: a kid that names the key itself. */
function thumbprint(jwk: JsonWebKey): string {
  return createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url')
}

async function newKey(encryption: KeyEncryption, createdAt: number, activatesAt: number) {
  const { privateKey } = await generateRsaKeyPair('rsa', { modulusLength: 2048 })
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' })
  const kid = thumbprint(publicJwk)
  const der = privateKey.export({ format: 'der', type: 'pkcs8' })
  const stored: StoredSigningKey = {
    kid,
    publicJwk: { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e, kid, ...signatureUse },
    privateKeyEncrypted: encryption.encrypt(kid, der),
    createdAt: new Date(createdAt),
    activatesAt: new Date(activatesAt),
  }
  return stored
}

/** What to do with the stored keys at `now`: the pure rule, so rotation reads the same wherever it runs. */
export function planRotation(
  keys: { kid: string; activatesAt: number }[],
  now: number,
  timing: KeyRingTiming,
): { create?: { activatesAt: number }; remove: string[] } {
  const sorted = [...keys].sort((a, b) => a.activatesAt - b.activatesAt)
  if (sorted.length === 0) return { create: { activatesAt: now }, remove: [] }
  const keepMs = (timing.tokenLifetimeSeconds + timing.cacheMarginSeconds) * 1000
  const remove = sorted
    .filter((_key, i) => {
      const retiredAt = sorted[i + 1]?.activatesAt
      return retiredAt !== undefined && retiredAt <= now && retiredAt + keepMs <= now
    })
    .map((key) => key.kid)
  const current = sorted.filter((key) => key.activatesAt <= now).at(-1)
  const upcoming = sorted.some((key) => key.activatesAt > now)
  if (!current) return { remove }
  // the next key is created prePublish ahead of its turn, or later than that when the ring was not running
  const prePublishMs = keepMs
  const due = current.activatesAt + timing.rotationPeriodSeconds * 1000
  if (!upcoming && now >= due - prePublishMs) {
    return { create: { activatesAt: Math.max(due, now + prePublishMs) }, remove }
  }
  return { remove }
}

/**
 * SIGNING_KEY_ENCRYPTION_SECRET is being rotated: the keys stored under another secret than the first are sealed again
 * under the first (the caller holds the rotation lock: one instance at a time), so the older secrets can leave the list.
 */
async function resealOlder(
  stored: StoredSigningKey[],
  {
    encryption,
    repository,
    logger,
  }: { encryption: KeyEncryption; repository: SigningKeysRepository; logger?: KeyRingLogger | undefined },
  tx: TransactionSql,
): Promise<void> {
  const again = stored.flatMap(({ kid, privateKeyEncrypted }) => {
    const sealed = encryption.resealed(kid, privateKeyEncrypted)
    return sealed === undefined ? [] : [{ kid, sealed }]
  })
  for (const { kid, sealed } of again) await repository.reseal(kid, sealed, tx)
  if (again.length > 0) {
    logger?.info(
      { kids: again.map(({ kid }) => kid) },
      'signing keys sealed again under the first SIGNING_KEY_ENCRYPTION_SECRET',
    )
  }
}

export function createKeyRing(options: KeyRingOptions): ManagedKeyRing {
  const { timing } = options
  const clock = options.clock ?? Date.now
  const repository: SigningKeysRepository = createSigningKeysRepository(options.sql)
  const encryption = createKeyEncryption(options.encryptionSecret)
  const keepMs = (timing.tokenLifetimeSeconds + timing.cacheMarginSeconds) * 1000
  const listeners: (() => void)[] = []
  let keys: LoadedKey[] = []
  let timer: NodeJS.Timeout | undefined
  let lastReload = 0
  let reloading: Promise<void> | undefined
  let lastSignature: string | undefined

  /**
   * The last view, kept while `keys` is the same list and the clock stays between the moments it was computed for:
   * every authenticated request looks its token's key up, and the view only changes as a key activates or a retired
   * key's keep ends.
   */
  let lastView: { keys: LoadedKey[]; from: number; until: number; view: KeyView } | undefined

  /** keys sorted by activation; current = the last one already active */
  function view(now = clock()): KeyView {
    if (lastView && lastView.keys === keys && now >= lastView.from && now < lastView.until)
      return lastView.view
    const currentIndex = keys.findLastIndex((key) => key.activatesAt <= now)
    const published = keys.filter((_key, i) => {
      if (i >= currentIndex) return true
      const retiredAt = keys[i + 1]?.activatesAt ?? Number.POSITIVE_INFINITY
      return retiredAt + keepMs > now
    })
    const computed: KeyView = {
      current: keys[currentIndex],
      published,
      byKid: new Map(published.map((key) => [key.kid, key.publicKey])),
    }
    // the next moment the answer can change: a key activates, or a retired key's keep ends
    let until = Number.POSITIVE_INFINITY
    keys.forEach((key, i) => {
      const keepEnds = (keys[i + 1]?.activatesAt ?? Number.POSITIVE_INFINITY) + keepMs
      for (const moment of [key.activatesAt, keepEnds]) if (moment > now && moment < until) until = moment
    })
    lastView = { keys, from: now, until, view: computed }
    return computed
  }

  function load(rows: StoredSigningKey[]): void {
    const known = new Map(keys.map((key) => [key.kid, key]))
    keys = rows
      .map((row) => {
        const cached = known.get(row.kid)
        if (cached) return cached
        const privateKey = createPrivateKey({
          key: encryption.decrypt(row.kid, row.privateKeyEncrypted),
          format: 'der',
          type: 'pkcs8',
        })
        return {
          kid: row.kid,
          activatesAt: row.activatesAt.getTime(),
          privateKey,
          publicKey: createPublicKey(privateKey),
          publicJwk: row.publicJwk,
          privateJwk: { ...privateKey.export({ format: 'jwk' }), kid: row.kid, ...signatureUse },
        }
      })
      .sort((a, b) => a.activatesAt - b.activatesAt)
    lastReload = clock()
  }

  async function rotateIfDue(): Promise<void> {
    await repository.underRotationLock(async (tx) => {
      const stored = await repository.all(tx)
      if (encryption.rotating)
        await resealOlder(stored, { encryption, repository, logger: options.logger }, tx)
      const now = clock()
      const plan = planRotation(
        stored.map((key) => ({ kid: key.kid, activatesAt: key.activatesAt.getTime() })),
        now,
        timing,
      )
      if (plan.create) {
        const key = await newKey(encryption, now, plan.create.activatesAt)
        await repository.insert(key, tx)
        options.logger?.info(
          { kid: key.kid, activatesAt: key.activatesAt.toISOString() },
          'signing key created (published now, signs from activatesAt)',
        )
      }
      if (plan.remove.length > 0) {
        await repository.remove(plan.remove, tx)
        options.logger?.info(
          { kids: plan.remove },
          'signing keys removed: every token they signed has expired',
        )
      }
    })
  }

  function notifyIfChanged(): void {
    const { current, published } = view()
    const signature = `${current?.kid}|${published.map((key) => key.kid).join(',')}`
    const changed = lastSignature !== undefined && signature !== lastSignature
    lastSignature = signature
    if (!changed) return
    for (const listener of listeners) {
      try {
        listener()
      } catch (error) {
        options.logger?.error({ err: error }, 'signing key change listener failed')
      }
    }
  }

  async function refresh(): Promise<void> {
    await rotateIfDue()
    load(await repository.all())
    notifyIfChanged()
  }

  /** An unknown kid may be a key another instance just added: reload, at most once a second. */
  async function reloadForUnknownKid(): Promise<void> {
    if (clock() - lastReload < 1000) return
    reloading ??= repository
      .all()
      .then(load)
      .then(notifyIfChanged)
      .finally(() => {
        reloading = undefined
      })
    await reloading
  }

  return {
    signingKey() {
      const { current } = view()
      if (!current) throw new Error('the key ring has no signing key: start() it first')
      return { kid: current.kid, privateKey: current.privateKey }
    },

    publicJwks() {
      const { current, published } = view()
      const ordered = current ? [current, ...published.filter((key) => key !== current)] : published
      return { keys: ordered.map((key) => ({ ...key.publicJwk })) }
    },

    privateJwks() {
      const { current, published } = view()
      const ordered = current ? [current, ...published.filter((key) => key !== current)] : published
      return ordered.map((key) => ({ ...key.privateJwk }))
    },

    async verificationKey(kid) {
      const found = view().byKid.get(kid)
      if (found) return found
      await reloadForUnknownKid()
      return view().byKid.get(kid)
    },

    onChange(listener) {
      listeners.push(listener)
    },

    async start() {
      await refresh()
      timer ??= setInterval(() => {
        refresh().catch((error: unknown) =>
          options.logger?.error({ err: error }, 'signing key rotation check failed'),
        )
      }, timing.checkIntervalMs)
      timer.unref()
    },

    stop() {
      if (timer) clearInterval(timer)
      timer = undefined
    },

    refresh,
  }
}

/**
 * Production timing from configuration: keys rotate every `rotationPeriodSeconds`; tokens live at most an hour (the
 * upper bound of ACCESS_TOKEN_TTL_SECONDS and the OIDC provider's ID-token lifetime); verifiers cache the JWKS for
 * `jwksMaxAgeSeconds`; instances check every minute.
 */
export function keyRingTiming(rotationPeriodSeconds: number, jwksMaxAgeSeconds: number): KeyRingTiming {
  const checkIntervalMs = 60_000
  const clockSkewSeconds = 60
  return {
    rotationPeriodSeconds,
    tokenLifetimeSeconds: 3600,
    cacheMarginSeconds: jwksMaxAgeSeconds + checkIntervalMs / 1000 + clockSkewSeconds,
    checkIntervalMs,
  }
}
