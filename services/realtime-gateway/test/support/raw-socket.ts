// A client of /ws (the `ws` package) for the tests of what the channel does to a raw connection: every message it
// hears (JSON), and how it was closed.
import WebSocket from 'ws'
import { someAddress } from './realtime.ts'

export interface RawClient {
  socket: WebSocket
  /** every message heard, parsed */
  messages: Record<string, unknown>[]
  /** the close code and reason, once closed */
  closed: Promise<{ code: number; reason: string }>
}

/** Opens /ws of `url` (http://127.0.0.1:port) with these upgrade headers; resolves once open. */
export function openRaw(url: string, headers: Record<string, string>): Promise<RawClient> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ws`, {
    headers: { 'x-forwarded-for': someAddress(), ...headers },
  })
  const messages: Record<string, unknown>[] = []
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>))
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  )
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, messages, closed }))
    socket.once('error', reject)
  })
}
