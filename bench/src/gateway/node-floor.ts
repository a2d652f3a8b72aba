// The `node floor` target: the least a reverse proxy written in Node can do (node:http in, undici's dispatch out, the
// answer written straight into the response), with no routing, ids, logs, metrics or limits. Whatever it costs, any
// Node proxy costs on this machine; the gateway's distance to it is what the gateway's own code costs.
//
// Run as a process of its own (node-floor-process.ts): PORT, HOST, UPSTREAM_URL (http://host:port).
import {
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http'
import { Agent, type Dispatcher } from 'undici'

const port = Number(process.env.PORT)
const host = process.env.HOST ?? '127.0.0.1'
const upstreamUrl = process.env.UPSTREAM_URL
if (!Number.isInteger(port) || port <= 0 || !upstreamUrl) {
  process.stderr.write('node-floor: PORT and UPSTREAM_URL are required\n')
  process.exit(1)
}
const origin = new URL(upstreamUrl).origin

/**
 * Meaningful for one connection only: never passed on, either way. (Expect too: Node has answered 100-continue
 * itself, and undici refuses to send it.)
 */
const hopByHop: ReadonlySet<string> = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

function withoutHopByHop(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined && !hopByHop.has(name)) kept[name] = value
  }
  return kept
}

/** One request's answer, written into the client's response as undici delivers it. */
class Relay implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse
  #started = false

  constructor(res: ServerResponse) {
    this.#res = res
  }

  onRequestStart(): void {}

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // 1xx informational answers are not relayed; the final one follows
    if (statusCode < 200) return
    this.#res.writeHead(statusCode, withoutHopByHop(headers) as OutgoingHttpHeaders)
    this.#started = true
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#res.write(chunk)) {
      controller.pause()
      this.#res.once('drain', () => controller.resume())
    }
  }

  onResponseEnd(): void {
    this.#res.end()
  }

  onResponseError(): void {
    // cut short once started: the client must see a broken answer, never a truncated one that looks complete
    if (this.#started) this.#res.destroy()
    else this.#res.writeHead(502).end()
  }
}

const agent = new Agent({ keepAliveTimeout: 10_000 })

createServer((req, res) => {
  const hasBody =
    req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0
  agent.dispatch(
    {
      origin,
      path: req.url ?? '/',
      method: req.method ?? 'GET',
      headers: withoutHopByHop(req.headers),
      body: hasBody ? req : null,
    },
    new Relay(res),
  )
}).listen(port, host)

// the bench stops it with SIGTERM: exiting normally lets `--cpu-prof` (BENCH_CPU_PROFILE) write its profile
process.once('SIGTERM', () => process.exit(0))
