// Requests written byte by byte on a socket, as a hostile client (or a curl run by hand) sends them: no client
// library adds, fixes or refuses anything.
import { connect } from 'node:net'
import { type HttpAnswer, rawHttpAnswer } from './error-envelope.ts'

/** Sends `request` as it is to 127.0.0.1:`port` and reads until the server closes the connection. */
export function rawExchange(port: number, request: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString()
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

/**
 * A JSON POST written by hand (`Connection: close`, each header as given, repeated ones included as separate lines),
 * and its answer read from the socket.
 */
export async function rawJsonPost(
  port: number,
  path: string,
  body: unknown,
  headers: readonly (readonly [string, string])[] = [],
): Promise<HttpAnswer> {
  const payload = JSON.stringify(body)
  const lines = [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'Connection: close',
    ...headers.map(([name, value]) => `${name}: ${value}`),
  ]
  return rawHttpAnswer(await rawExchange(port, `${lines.join('\r\n')}\r\n\r\n${payload}`))
}
