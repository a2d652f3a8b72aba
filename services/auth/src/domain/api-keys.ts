// API keys: created by their owner (or an admin for anyone), shown once, stored as prefix + hash, revoked at will.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { type ApiKey, type ApiKeyListQuery, AppError, type CreateApiKeyBody } from '@meridian/contracts'
import { type Sql, transaction } from '@meridian/db'
import { type AuditSource, appendAudit, assertScopes, type Principal } from '@meridian/service-kit'
import type { ApiKeyRecord, ApiKeysRepository } from '../data/api-keys-repository.ts'

/** `mk_` + 12 hex characters of public prefix + `_` + 256 random bits (base64url). */
const keyPattern = /^mk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/
const hashKey = (key: string): string => createHash('sha256').update(key).digest('base64url')

/** Uses are recorded at most this often per key (and per instance: the query itself also checks). */
const touchIntervalMs = 60_000

export function presentApiKey(record: ApiKeyRecord): ApiKey {
  return {
    id: record.id,
    userId: record.userId,
    name: record.name,
    prefix: `mk_${record.prefix}`,
    scopes: record.scopes,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt?.toISOString() ?? null,
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null,
  }
}

const isAdmin = (principal: Principal) => principal.role === 'admin' || principal.roles.includes('admin')

/** Acting on `ownerId`'s keys: the owner themself, or an admin. */
function assertMayManage(principal: Principal, ownerId: string): void {
  if (principal.kind === 'user' && principal.subject === ownerId) return
  if (isAdmin(principal)) return
  throw AppError.forbidden()
}

/**
 * `sql`: where a key's creation and revocation are written with their audit entries, in one transaction (service-kit's
 * audit trail: who made or revoked which key, for whom, with which scopes; never the key).
 */
export function createApiKeyUseCases(keys: ApiKeysRepository, sql: Sql, clock: () => number = Date.now) {
  const touchedAt = new Map<string, number>()

  return {
    async createApiKey(principal: Principal, body: CreateApiKeyBody, source: AuditSource) {
      // a leaked key must not be able to mint itself successors
      if (principal.method === 'api-key') throw AppError.forbidden('API keys cannot create API keys')
      const ownerId = body.userId ?? principal.subject
      assertMayManage(principal, ownerId)
      // a key never carries a scope its creator's credential lacks: a token limited to `api-keys:write` would
      // otherwise mint a key for everything its user's role allows (the third hostile review's case)
      assertScopes(principal, body.scopes)
      const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt)
      if (expiresAt && expiresAt.getTime() <= clock()) {
        throw AppError.validation([
          { field: 'expiresAt', message: 'must be in the future', received: body.expiresAt },
        ])
      }
      const prefix = randomBytes(6).toString('hex')
      const key = `mk_${prefix}_${randomBytes(32).toString('base64url')}`
      const record = await transaction(sql, async (tx) => {
        const inserted = await keys.insert(
          { userId: ownerId, name: body.name, prefix, keyHash: hashKey(key), scopes: body.scopes, expiresAt },
          tx,
        )
        await appendAudit(tx, source, {
          action: 'api_key.created',
          target: `api_key:${inserted.id}`,
          detail: {
            userId: ownerId,
            name: body.name,
            prefix: `mk_${prefix}`,
            scopes: body.scopes,
            expiresAt,
          },
        })
        return inserted
      })
      return { ...presentApiKey(record), key }
    },

    async listApiKeys(principal: Principal, query: ApiKeyListQuery) {
      const ownerId = query.userId ?? principal.subject
      assertMayManage(principal, ownerId)
      const { rows, total } = await keys.listByUser(ownerId, {
        offset: (query.page - 1) * query.limit,
        limit: query.limit,
      })
      return { items: rows.map(presentApiKey), total }
    },

    async revokeApiKey(principal: Principal, id: string, source: AuditSource): Promise<void> {
      const found = await keys.findById(id)
      if (!found) throw AppError.notFound(`API key ${id} not found`)
      assertMayManage(principal, found.userId)
      await transaction(sql, async (tx) => {
        await keys.revoke(id, tx)
        // a second revocation is recorded too: who asked is what the trail is for
        await appendAudit(tx, source, {
          action: 'api_key.revoked',
          target: `api_key:${id}`,
          detail: {
            userId: found.userId,
            prefix: `mk_${found.prefix}`,
            alreadyRevoked: found.revokedAt !== null,
          },
        })
      })
    },

    /**
     * The principal of a presented key, or undefined when it is malformed, unknown, revoked, expired, or its owner is
     * no longer active. The owner's current role applies (a demoted owner's keys are demoted with them), and whether
     * their address is verified now (`emailVerified`).
     */
    async verifyApiKey(key: string): Promise<Principal | undefined> {
      const prefix = keyPattern.exec(key)?.[1]
      if (prefix === undefined) return undefined
      const found = await keys.findCredential(prefix)
      if (!found) return undefined
      const presented = Buffer.from(hashKey(key))
      const stored = Buffer.from(found.keyHash)
      if (presented.length !== stored.length || !timingSafeEqual(presented, stored)) return undefined
      const now = clock()
      if (found.revokedAt || (found.expiresAt && found.expiresAt.getTime() <= now)) return undefined
      if (found.ownerStatus !== 'active') return undefined
      if ((touchedAt.get(found.id) ?? 0) + touchIntervalMs <= now) {
        touchedAt.set(found.id, now)
        await keys.touch(found.id)
      }
      return {
        subject: found.userId,
        kind: 'user',
        role: found.ownerRole,
        roles: [],
        name: found.ownerName,
        email: found.ownerEmail,
        emailVerified: found.ownerEmailVerified,
        scopes: found.scopes,
        method: 'api-key',
        apiKeyId: found.id,
      }
    },
  }
}

export type ApiKeyUseCases = ReturnType<typeof createApiKeyUseCases>
