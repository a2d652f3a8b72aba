// The realtime-gateway's main.ts started as the system starts it (node --import tsx --import the kit's tracing
// preload) with tracing on: a Socket.IO client's echo goes round as without tracing, and the Socket.IO instrumentation
// the kit turns on writes its spans, found in the real trace store (Jaeger).
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import {
  eventually,
  freshDatabase,
  namedTopics,
  type StoredSpan,
  scaledMs,
  serviceProcessEnv,
  type TestDatabase,
  type TestTopics,
  type TraceStore,
  uniqueName,
  useTraceStore,
} from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allowedOrigin, connect, nextEvent } from './support/realtime.ts'

const serviceDir = fileURLToPath(new URL('..', import.meta.url))

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

describe('the realtime-gateway process, traced', () => {
  let store: TraceStore
  let database: TestDatabase
  let topics: TestTopics
  let child: ChildProcess
  let exited: Promise<number | null>
  let output = ''
  let url: string
  let socket: Socket | undefined
  const serviceName = uniqueName('realtime-traced')

  beforeAll(async () => {
    store = await useTraceStore()
    database = await freshDatabase('realtime_traced')
    const namespace = `${uniqueName('rtt')}.`
    const consumed = `${namespace}notification.created`
    topics = await namedTopics(
      [consumed, `${consumed}.retry.1`, `${consumed}.retry.2`, `${consumed}.retry.3`, `${consumed}.dlt`],
      1,
    )
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', '@meridian/service-kit/tracing/preload', 'src/main.ts'],
      {
        cwd: serviceDir,
        env: {
          ...serviceProcessEnv({ databaseUrl: database.url, consulName: serviceName }),
          CONSUL_REGISTER: 'false',
          HOST: '127.0.0.1',
          PORT: String(port),
          KAFKA_NAMESPACE: namespace,
          REALTIME_ALLOWED_ORIGINS: allowedOrigin,
          REALTIME_REDIS_PREFIX: `${uniqueName('rtt')}:`,
          OTEL_EXPORTER_OTLP_ENDPOINT: store.otlpEndpoint,
          OTEL_SERVICE_NAME: serviceName,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    child.stdout?.on('data', (chunk) => {
      output += String(chunk)
    })
    child.stderr?.on('data', (chunk) => {
      output += String(chunk)
    })
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
    await eventually(
      'the realtime-gateway is ready',
      async () => {
        if (child.exitCode !== null) throw new Error(`the realtime-gateway exited:\n${output}`)
        const response = await fetch(`${url}/health/ready`).catch(() => undefined)
        return response?.status === 200
      },
      scaledMs(90_000),
      250,
    )
  }, scaledMs(600_000))

  afterAll(async () => {
    socket?.close()
    if (child?.exitCode === null) {
      child.kill('SIGKILL')
      await exited
    }
    await topics?.delete()
    await database?.drop()
    await store?.release()
  })

  it('when a client connects and asks for an echo, then it is answered, and Jaeger holds the Socket.IO spans of the exchange, the send of the answer under the receive of the event', async () => {
    socket = await connect(url, '/', { headers: { origin: allowedOrigin } })
    const echoed = nextEvent<{ type: string; payload: unknown }>(socket, 'echo')
    socket.emit('echo', { traced: true })
    expect(await echoed).toEqual({ type: 'echo', payload: { traced: true } })

    // the instrumentation names a span by its direction and namespace, the event is its attribute
    const eventOf = (span: StoredSpan) =>
      span.tags.find((tag) => tag.key === 'messaging.socket.io.event_name')?.value
    let received: StoredSpan | undefined
    let sent: StoredSpan | undefined
    await eventually(
      'the Socket.IO spans of the echo are in Jaeger',
      async () => {
        const spans = (await store.tracesOf(serviceName)).flatMap((trace) => trace.spans)
        received = spans.find((span) => span.operationName === 'receive /' && eventOf(span) === 'echo')
        sent = spans.find((span) => span.operationName === 'send /' && eventOf(span) === 'echo')
        return received !== undefined && sent !== undefined
      },
      undefined,
      250,
    )
    // the answer is sent while the client's event is handled: one trace, the send under the receive
    expect(sent?.traceID).toBe(received?.traceID)
    expect(sent?.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID).toBe(
      received?.spanID,
    )
  })

  it('when the process is stopped with SIGTERM, then it drains, flushes its spans and exits with code 0', async () => {
    socket?.close()
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
