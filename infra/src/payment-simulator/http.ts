// The HTTP plumbing of the Stripe subset and the simulator's own endpoints: reading a bounded body, writing a JSON or
// HTML answer, HTML escaping. Node's http only; no framework, so that the simulator bundles into one file with no
// dependencies.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { StoredResponse } from './idempotency.ts'

/** A body over its limit: the Stripe subset and the simulator's own endpoints answer it each in its shape. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${limit} bytes`)
  }
}

export interface ReadBodyOptions {
  /** bytes kept at most */
  limit: number
  /**
   * undefined: refuse as soon as the limit is passed (the rest is discarded as it comes). A number: read on to the
   * end (discarding) up to that many bytes, so that a client still sending gets the answer rather than a reset, and
   * drop the connection past it.
   */
  drainUpTo?: number
}

export function readBody(req: IncomingMessage, { limit, drainUpTo }: ReadBodyOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      if (drainUpTo === undefined) {
        reject(new BodyTooLarge(limit))
        req.resume()
      } else if (size > drainUpTo) {
        reject(new BodyTooLarge(limit))
        req.destroy()
      }
    })
    req.on('end', () =>
      size > limit ? reject(new BodyTooLarge(limit)) : resolve(Buffer.concat(chunks).toString('utf8')),
    )
    req.on('error', reject)
  })
}

/** The value of a header sent once (the first, if sent more than once). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

export function sendJson(res: ServerResponse, response: StoredResponse): void {
  if (res.headersSent || res.destroyed) return
  const text = JSON.stringify(response.body)
  res.writeHead(response.status, {
    ...response.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, {
    ...headers,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'x-content-type-options': 'nosniff',
  })
  res.end(html)
}

const htmlEntities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => htmlEntities[char]!)
