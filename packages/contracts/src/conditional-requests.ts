// The headers of conditional requests (RFC 9110 §13.1) on a resource with an ETag: a change sent with If-Match, a
// read sent with If-None-Match.
import { Type } from 'typebox'

/**
 * The longest list of entity tags a condition may carry. Ours are `"{id}.{version}"`, at most 51 characters weak
 * (`W/`): 1024 holds 19 of them, where a client sends the one of its copy (a cache, the few of the copies it holds).
 */
export const entityTagListMaxLength = 1024

export const IfMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      maxLength: entityTagListMaxLength,
      description: 'the ETag read (or *); any other answers 412, absent changes unconditionally',
    }),
  ),
})

export const IfNoneMatchHeader = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      maxLength: entityTagListMaxLength,
      description: 'the ETag of your copy: 304 while it is current',
    }),
  ),
})
