// The Idempotency-Key request header (IETF httpapi idempotency-key draft) of the routes that create something a
// client must be able to retry safely: POST /payments (required) and placing an order (optional). What a key is and
// its header schema, for validation and OpenAPI alike.
import { Type } from 'typebox'

export const idempotencyKeyHeader = 'idempotency-key'
/** Set on an answer that is an earlier request's, replayed for a retry with the same key and body. */
export const replayedHeader = 'idempotent-replayed'
export const maxIdempotencyKeyLength = 255
/** Printable ASCII only (the draft's key is a structured-field string): no control or non-ASCII characters. */
export const idempotencyKeyPattern = '^[\\x20-\\x7E]+$'

const idempotencyKey = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: maxIdempotencyKeyLength,
    pattern: idempotencyKeyPattern,
    description,
  })

/** The header's schema on a route that refuses a request without one (POST /payments). */
export const RequiredIdempotencyKeyHeader = (description: string) =>
  Type.Object({ [idempotencyKeyHeader]: idempotencyKey(description) })

/** The header's schema on a route where a request without one runs as it always did (placing an order). */
export const OptionalIdempotencyKeyHeader = (description: string) =>
  Type.Object({ [idempotencyKeyHeader]: Type.Optional(idempotencyKey(description)) })
