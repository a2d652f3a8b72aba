// X-Request-Id: a well-formed incoming id is reused, otherwise one is generated; every response echoes it.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const requestIdHeader = 'x-request-id'

/** Printable, bounded ids only: an id ends up in logs and headers, so it must not carry anything else. */
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/

export function requestIdFrom(request: IncomingMessage): string {
  const incoming = request.headers[requestIdHeader]
  const candidate = Array.isArray(incoming) ? incoming[0] : incoming
  return candidate && acceptable.test(candidate) ? candidate : randomUUID()
}
