// A client on a raw socket (node:net): it writes bytes exactly as given — an upgrade request with another request right
// behind it, bytes after a refusal — and reads the answers one by one, which no HTTP client library would send or show.
import { connect, type Socket } from 'node:net'
import { scaledMs, waitMs } from '@meridian/testkit'

export interface RawAnswer {
  status: number
  /** header names in lower case; a repeated header's values joined with ', ' */
  headers: Record<string, string>
  body: string
}

export interface RawClient {
  /** writes the text as it is (latin1); ignored once the socket is gone */
  write(text: string): void
  /** the next whole answer: its head, then a content-length or chunked body (none for 1xx) */
  nextAnswer(timeoutMs?: number): Promise<RawAnswer>
  /** waits until the bytes not yet read contain `text`, and takes them up to its end */
  readUntil(text: string, timeoutMs?: number): Promise<string>
  /** resolves once the other side has closed the connection (its end or a reset); fails after timeoutMs */
  closed(timeoutMs?: number): Promise<void>
  /** bytes received and not yet taken by nextAnswer or readUntil */
  unread(): string
  destroy(): void
}

const headEnd = '\r\n\r\n'

function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers }
}

/** A chunked body at the start of `text`: its decoded content and the length it took, or undefined until whole. */
function chunkedBody(text: string): { body: string; length: number } | undefined {
  let at = 0
  let body = ''
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at)
    if (lineEnd === -1) return undefined
    const size = Number.parseInt(text.slice(at, lineEnd), 16)
    if (Number.isNaN(size))
      throw new Error(`malformed chunk size in ${JSON.stringify(text.slice(at, lineEnd))}`)
    const start = lineEnd + 2
    if (size === 0) {
      // no trailers are sent by the servers under test: the last chunk is followed by one empty line
      return text.length >= start + 2 ? { body, length: start + 2 } : undefined
    }
    if (text.length < start + size + 2) return undefined
    body += text.slice(start, start + size)
    at = start + size + 2
  }
}

export async function connectRaw(port: number): Promise<RawClient> {
  const socket: Socket = connect({ host: '127.0.0.1', port })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let buffered = ''
  let ended = false
  const listeners = new Set<() => void>()
  const changed = () => {
    for (const listener of listeners) listener()
  }
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1')
    changed()
  })
  socket.on('error', () => {})
  socket.on('end', () => {
    ended = true
    changed()
  })
  socket.on('close', () => {
    ended = true
    changed()
  })

  /** Resolves with what `take` finds in the buffer, checked on every change, or fails after timeoutMs. */
  function waitFor<T>(take: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        let found: T | undefined
        try {
          found = take()
        } catch (error) {
          finish()
          reject(error)
          return
        }
        if (found === undefined) return
        finish()
        resolve(found)
      }
      const timer = setTimeout(() => {
        finish()
        reject(
          new Error(`${what} not received within ${timeoutMs} ms; received: ${JSON.stringify(buffered)}`),
        )
      }, timeoutMs)
      const finish = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      check()
    })
  }

  function takeAnswer(): RawAnswer | undefined {
    const end = buffered.indexOf(headEnd)
    if (end === -1) return undefined
    const { status, headers } = parseHead(buffered.slice(0, end))
    const rest = buffered.slice(end + headEnd.length)
    let body: string
    let length: number
    if (status < 200 || status === 204 || status === 304) {
      body = ''
      length = 0
    } else if (headers['content-length'] !== undefined) {
      length = Number(headers['content-length'])
      if (rest.length < length) return undefined
      body = rest.slice(0, length)
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const chunked = chunkedBody(rest)
      if (!chunked) return undefined
      ;({ body, length } = chunked)
    } else {
      // delimited by the connection's end
      if (!ended) return undefined
      body = rest
      length = rest.length
    }
    buffered = rest.slice(length)
    return { status, headers, body }
  }

  return {
    write(text) {
      if (!socket.destroyed && socket.writable) socket.write(Buffer.from(text, 'latin1'))
    },
    nextAnswer: (timeoutMs = scaledMs(waitMs)) => waitFor(takeAnswer, 'an answer', timeoutMs),
    readUntil: (text, timeoutMs = scaledMs(waitMs)) =>
      waitFor(
        () => {
          const at = buffered.indexOf(text)
          if (at === -1) return undefined
          const taken = buffered.slice(0, at + text.length)
          buffered = buffered.slice(at + text.length)
          return taken
        },
        JSON.stringify(text),
        timeoutMs,
      ),
    closed: (timeoutMs = scaledMs(waitMs)) =>
      waitFor(() => (ended ? true : undefined), 'the end of the connection', timeoutMs).then(() => {}),
    unread: () => buffered,
    destroy: () => socket.destroy(),
  }
}
