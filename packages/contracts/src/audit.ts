// The audit trail (GET /api/v1/admin/audit/{service}, and the gateway's GET /api/v1/admin/audit over every service):
// what operators and admins did, who, when, from where, under which request. Read-only: no route changes an entry.
import { type Static, Type } from 'typebox'
import { QueryObject } from './pagination.ts'
import { Nullable } from './schema-kinds.ts'

const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })

/** An action's name: what was done, e.g. `api_key.created`, `user.role_changed`, `return.received`. */
export const auditActionPattern = '^[a-z][a-z0-9_.-]{0,99}$'

export const AuditEntry = Type.Object(
  {
    service: Type.String({ description: 'the service that did it and keeps the entry' }),
    id: Type.String({ description: "the entry's number in its service's trail" }),
    at: Timestamp,
    actor: Type.String({
      description: 'who: `user:<id>`, `api-key:<id>`, `client:<id>` (an OAuth client), `carrier:<name>`',
    }),
    action: Type.String({
      description: 'what, e.g. `api_key.created`, `user.role_changed`, `return.received`',
    }),
    target: Type.String({ description: 'on what, e.g. `user:<id>`, `api_key:<id>`, `return:<id>`' }),
    detail: Type.Record(Type.String(), Type.Unknown(), { description: 'what changed (never a secret)' }),
    address: Type.Optional(Type.String({ description: "the client's address, as the service saw it" })),
    requestId: Type.Optional(
      Type.String({ description: 'the request it came with (X-Request-Id; in the logs too)' }),
    ),
  },
  { additionalProperties: false },
)
export type AuditEntry = Static<typeof AuditEntry>

/** A page of the trail, newest first, and the query of the next (older) page, null at its end. */
export const AuditPage = Type.Object(
  {
    data: Type.Array(AuditEntry),
    next: Nullable(Type.String({ description: 'the query string of the next, older page' })),
  },
  { additionalProperties: false },
)
export type AuditPage = Static<typeof AuditPage>

/** Every service's trail merged at the gateway: a page, and the services whose trail could not be read just now. */
export const MergedAuditPage = Type.Object(
  {
    data: Type.Array(AuditEntry),
    next: Nullable(Type.String({ description: 'the query string of the next, older page' })),
    unavailable: Type.Array(Type.String(), {
      description: 'the services whose trail could not be read just now',
    }),
  },
  { additionalProperties: false },
)
export type MergedAuditPage = Static<typeof MergedAuditPage>

export const AuditQuery = QueryObject(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    before: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description: 'only entries older than this (the `next` link carries it)',
      }),
    ),
    action: Type.Optional(Type.String({ pattern: auditActionPattern, maxLength: 100 })),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  },
  { additionalProperties: false },
)
export type AuditQuery = Static<typeof AuditQuery>
