// A raw TCP upstream for the upgrade tests, registered in the real Consul: it records every byte each connection
// brings (the witness that nothing reached a service) and answers each request head with the bytes its script gives
// for the path — a keep-alive answer, a 101 and then an echo, or a broken head.
import { randomUUID } from 'node:crypto'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { consulApi, uniqueName } from '@meridian/testkit'

export interface RawConnection {
  /** everything received, as latin1 text */
  received: string
  closed: boolean
}

/**
 * What the upstream does with one request head: `answer` writes an HTTP answer and keeps the connection for the next
 * request; `switch` writes it and then echoes every byte back as `echo:<bytes>`; `script` takes the socket over.
 */
export type RawBehaviour =
  | { answer: string }
  | { switch: string[]; gapMs?: number }
  | { script(socket: Socket): void }

export interface RawUpstream {
  name: string
  connections: RawConnection[]
  /** every byte every connection received, in connection order */
  everything(): string
  /** the heads of the requests received, first line and headers, across connections */
  heads(): string[]
  close(): Promise<void>
}

const headEnd = '\r\n\r\n'

/** A keep-alive JSON answer naming the path it served. */
export function jsonAnswer(status: number, reason: string, body: unknown): string {
  const text = JSON.stringify(body)
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
    `connection: keep-alive\r\n\r\n${text}`
  )
}

export const switchingProtocols =
  'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: test\r\n\r\n'

export async function writeInPieces(socket: Socket, pieces: string[], gapMs: number): Promise<void> {
  for (const [index, piece] of pieces.entries()) {
    if (socket.destroyed) return
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, gapMs))
    socket.write(piece)
  }
}

/** Serves one connection: heads are answered in order until a behaviour switches protocols or takes the socket. */
function serve(socket: Socket, connection: RawConnection, behaviour: (path: string) => RawBehaviour): void {
  let pending = ''
  let mode: 'http' | 'echo' | 'scripted' = 'http'
  socket.on('error', () => socket.destroy())
  socket.on('close', () => {
    connection.closed = true
  })
  socket.on('data', (chunk: Buffer) => {
    const text = chunk.toString('latin1')
    connection.received += text
    if (mode === 'echo') {
      socket.write(`echo:${text}`)
      return
    }
    if (mode === 'scripted') return
    pending += text
    for (let end = pending.indexOf(headEnd); end !== -1 && mode === 'http'; end = pending.indexOf(headEnd)) {
      const head = pending.slice(0, end)
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0)
      if (pending.length < end + headEnd.length + length) return
      const rest = pending.slice(end + headEnd.length + length)
      pending = ''
      const path = head.split(' ')[1] ?? '/'
      const chosen = behaviour(path)
      if ('answer' in chosen) {
        socket.write(chosen.answer)
        pending = rest
      } else if ('switch' in chosen) {
        mode = 'echo'
        void writeInPieces(socket, chosen.switch, chosen.gapMs ?? 0).then(() => {
          if (rest !== '') socket.write(`echo:${rest}`)
        })
      } else {
        mode = 'scripted'
        chosen.script(socket)
      }
    }
  })
}

/** Starts the upstream on an ephemeral port and registers it in Consul (no checks: passing while registered). */
export async function startRawUpstream(behaviour: (path: string) => RawBehaviour): Promise<RawUpstream> {
  const connections: RawConnection[] = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    const connection: RawConnection = { received: '', closed: false }
    connections.push(connection)
    serve(socket, connection, behaviour)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const name = uniqueName('gw-raw')
  const id = `${name}-${randomUUID()}`
  const { baseUrl, headers } = consulApi()
  const registered = await fetch(`${baseUrl}/v1/agent/service/register`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ ID: id, Name: name, Address: '127.0.0.1', Port: port }),
  })
  if (!registered.ok) throw new Error(`Consul refused the raw upstream: ${registered.status}`)
  return {
    name,
    connections,
    everything: () => connections.map((connection) => connection.received).join(''),
    heads: () =>
      connections.flatMap(
        (connection) => connection.received.match(/[A-Z]+ \/\S* HTTP\/1\.1\r\n[\s\S]*?\r\n\r\n/g) ?? [],
      ),
    async close() {
      await fetch(`${baseUrl}/v1/agent/service/deregister/${encodeURIComponent(id)}`, {
        method: 'PUT',
        headers,
      })
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
