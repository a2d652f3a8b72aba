// An upgrade's exchange with one instance: the request head written on a connected socket, and the answer's head read
// whole by Node's HTTP parser (in however many chunks it comes), bounded in size and in time. Only a `101` hands the
// socket over; any other answer comes back as an ordinary response whose body the parser frames.
import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

/** The largest answer head taken from an instance; a longer one is a bad answer (Node's default for any message). */
export const maxAnswerHeadBytes = 16 * 1024

export type UpgradeAnswer =
  /** the instance switched protocols: its socket, and what it sent after the 101 head (a first frame) */
  | { switched: true; response: IncomingMessage; socket: Socket; head: Buffer }
  /** the instance answered without switching: the response, its body still to read */
  | { switched: false; response: IncomingMessage }

/** The answer's head did not arrive whole within the time given. */
export class UpgradeAnswerTimeout extends Error {
  override readonly name = 'UpgradeAnswerTimeout'
  readonly code = 'UPGRADE_ANSWER_TIMEOUT'
  constructor(timeoutMs: number) {
    super(`the instance did not answer the upgrade within ${timeoutMs} ms`)
  }
}

/** An answer that is HTTP but not one to relay: a 101 that names no protocol, a status past 599. */
export class BadUpgradeAnswer extends Error {
  override readonly name = 'BadUpgradeAnswer'
  readonly code = 'BAD_UPGRADE_ANSWER'
}

export interface UpgradeExchangeOptions {
  method: string
  /** path and query on the instance */
  path: string
  headers: Record<string, string | string[]>
  /** time for the whole answer head, ms (a head trickled byte by byte does not stretch it) */
  timeoutMs: number
}

export interface UpgradeExchange {
  /** the instance's answer; rejects with the parser's error (HPE_*), ECONNRESET, a timeout or the abort's reason */
  answer: Promise<UpgradeAnswer>
  /** gives the exchange up before the answer (the client went away); the connection is destroyed */
  abort(reason: Error): void
}

export function exchangeUpgrade(connection: Socket, options: UpgradeExchangeOptions): UpgradeExchange {
  let outgoing: ClientRequest | undefined
  const answer = new Promise<UpgradeAnswer>((resolve, reject) => {
    let settled = false
    let timer: NodeJS.Timeout | undefined
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      outcome()
    }
    // (a header Node refuses to write throws here, which rejects the answer)
    outgoing = httpRequest({
      createConnection: () => connection,
      method: options.method,
      path: options.path,
      headers: options.headers,
      setHost: false,
      maxHeaderSize: maxAnswerHeadBytes,
    })
    timer = setTimeout(
      () => outgoing?.destroy(new UpgradeAnswerTimeout(options.timeoutMs)),
      options.timeoutMs,
    )
    outgoing.once('upgrade', (response: IncomingMessage, socket: Socket, head: Buffer) =>
      settle(() => {
        if (response.headers.upgrade !== undefined) return resolve({ switched: true, response, socket, head })
        socket.destroy()
        reject(new BadUpgradeAnswer('the instance switched protocols without naming one'))
      }),
    )
    outgoing.once('response', (response: IncomingMessage) =>
      settle(() => {
        const status = response.statusCode ?? 0
        if (status >= 200 && status <= 599) return resolve({ switched: false, response })
        response.destroy()
        reject(new BadUpgradeAnswer(`the instance answered the upgrade with status ${status}`))
      }),
    )
    // (kept after the answer: a later error of the destroyed request must not go unhandled)
    outgoing.on('error', (error) => settle(() => reject(error)))
    outgoing.end()
  })
  return {
    answer,
    abort(reason) {
      outgoing?.destroy(reason)
      connection.destroy()
    },
  }
}
