// The headers of conditional requests (RFC 9110 §13.1) on a resource with an ETag: a change sent with If-Match, a
// read sent with If-None-Match.
import { Type } from 'typebox'

export const IfMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      description: 'the ETag read (or *); any other answers 412, absent changes unconditionally',
    }),
  ),
})

export const IfNoneMatchHeader = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({ description: 'the ETag of your copy: 304 while it is current' }),
  ),
})
