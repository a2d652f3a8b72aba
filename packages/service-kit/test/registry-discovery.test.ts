// Discovery against the real Consul agent: blocking queries, joins and leaves, outages through a closable proxy.
import { once } from 'node:events'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { consulApi, eventually, infraEndpoints, uniqueName } from '@meridian/testkit'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createDiscovery,
  discoveryDefaults,
  instanceFromHealthEntry,
  nextBlockingIndex,
  retryDelayMs,
  type ServiceDiscovery,
  type ServiceInstance,
} from '../src/registry/service-discovery.ts'

const { baseUrl, headers } = consulApi()
const { consulHttpAddr, consulToken } = infraEndpoints()
const consulSettings = { address: consulHttpAddr, ...(consulToken ? { token: consulToken } : {}) }

async function consul(method: 'GET' | 'PUT', path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status} ${await response.text()}`)
  return response
}

const registeredIds: string[] = []

/** Registers an instance straight through Consul's API with a TTL check, passed at once unless told otherwise. */
async function registerPassingInstance(service: string, port: number, meta: Record<string, string> = {}) {
  const id = `${service}-${port}`
  await consul('PUT', '/v1/agent/service/register', {
    ID: id,
    Name: service,
    Address: '127.0.0.1',
    Port: port,
    Tags: ['blue'],
    Meta: meta,
    Check: { CheckID: `service:${id}`, Name: 'ttl', TTL: '60s', DeregisterCriticalServiceAfter: '90s' },
  })
  registeredIds.push(id)
  await consul('PUT', `/v1/agent/check/pass/service:${id}`)
  return id
}

function recordingLogger() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, lines }
}

const ids = (instances: ServiceInstance[]) => instances.map((instance) => instance.id)

/** A TCP proxy in front of the real Consul that can be taken down (dropping its connections) and brought back. */
function consulProxy() {
  const target = new URL(baseUrl)
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  let requests = 0
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  return {
    get address() {
      return `127.0.0.1:${port}`
    },
    /** the HTTP requests sent through it so far (each starts a line with a method and /v1/) */
    get requests() {
      return requests
    },
    async up() {
      server = createServer((client) => {
        track(client)
        const upstream = connect(Number(target.port || 80), target.hostname)
        track(upstream)
        client.on('data', (chunk: Buffer) => {
          requests += chunk.toString('latin1').match(/(?:^|\n)[A-Z]+ \/v1\//g)?.length ?? 0
        })
        client.pipe(upstream).pipe(client)
        client.on('close', () => upstream.destroy())
        upstream.on('close', () => client.destroy())
      })
      server.listen(port, '127.0.0.1')
      await once(server, 'listening')
      port = (server.address() as { port: number }).port
    },
    async down() {
      const closing = server ? once(server, 'close') : Promise.resolve()
      server?.close()
      for (const socket of sockets) socket.destroy()
      await closing
    },
  }
}

describe('createDiscovery', () => {
  const discoveries: ServiceDiscovery[] = []
  afterAll(async () => {
    await Promise.allSettled(registeredIds.map((id) => consul('PUT', `/v1/agent/service/deregister/${id}`)))
    await Promise.all(discoveries.map((discovery) => discovery.close()))
  })

  function follow(name: string, options: Partial<Parameters<typeof createDiscovery>[0]> = {}) {
    const { logger, lines } = recordingLogger()
    const discovery = createDiscovery({ consul: consulSettings, name, logger, wait: '5s', ...options })
    discoveries.push(discovery)
    return { discovery, lines }
  }

  it('when the service has no instances yet, then ready() resolves with an empty list', async () => {
    const { discovery } = follow(uniqueName('svc-none'))
    await discovery.ready()
    expect(discovery.instances()).toEqual([])
  })

  it('when an instance joins and later leaves, then the blocking query reports both changes to listeners', async () => {
    const name = uniqueName('svc-watch')
    const firstId = await registerPassingInstance(name, 4101, { version: '1.0.0', weight: '5' })
    const { discovery } = follow(name)
    await discovery.ready()
    expect(discovery.instances()).toEqual([
      {
        id: firstId,
        address: '127.0.0.1',
        port: 4101,
        tags: ['blue'],
        meta: { version: '1.0.0', weight: '5' },
        weight: 5,
      },
    ])

    const seen: string[][] = []
    const unsubscribe = discovery.onChange((instances) => seen.push(ids(instances)))
    const secondId = await registerPassingInstance(name, 4102)
    await expect.poll(() => ids(discovery.instances())).toEqual([firstId, secondId])
    expect(discovery.instances().find((instance) => instance.id === secondId)?.weight).toBe(1)

    await consul('PUT', `/v1/agent/service/deregister/${firstId}`)
    await expect.poll(() => ids(discovery.instances())).toEqual([secondId])
    expect(seen).toEqual([[firstId, secondId], [secondId]])

    unsubscribe()
    await consul('PUT', `/v1/agent/check/fail/service:${secondId}`)
    await expect.poll(() => discovery.instances()).toEqual([])
    expect(seen).toHaveLength(2)
  })

  it('when Consul becomes unreachable, then discovery keeps the last good list and logs; when it is back, then discovery catches up', async () => {
    const name = uniqueName('svc-outage')
    const firstId = await registerPassingInstance(name, 4201)
    const proxy = consulProxy()
    await proxy.up()
    const { discovery, lines } = follow(name, {
      consul: { ...consulSettings, address: proxy.address },
      retry: { initialDelayMs: 50, maxDelayMs: 300 },
    })
    await discovery.ready()
    expect(ids(discovery.instances())).toEqual([firstId])

    await proxy.down()
    const warnings = () => lines.filter((line) => line.level === 40)
    await expect.poll(() => warnings().length).toBeGreaterThanOrEqual(2)
    expect(warnings()[0]).toMatchObject({
      msg: 'Consul health query failed; keeping the last known instances',
      discoveredService: name,
      keptInstances: 1,
    })
    const secondId = await registerPassingInstance(name, 4202)
    await consul('PUT', `/v1/agent/service/deregister/${firstId}`)
    expect(ids(discovery.instances())).toEqual([firstId])

    await proxy.up()
    await expect.poll(() => ids(discovery.instances())).toEqual([secondId])
    expect(lines.map((line) => line.msg)).toContain('Consul reachable again; discovery resumed')
    await discovery.close()
    await proxy.down()
  })

  it('when closed during a blocking query that Consul would hold for 10 minutes, then close() returns, and a pending ready() rejects', async () => {
    const name = uniqueName('svc-close')
    await registerPassingInstance(name, 4301)
    const { logger } = recordingLogger()
    const proxy = consulProxy()
    await proxy.up()
    const waiting = createDiscovery({
      consul: { ...consulSettings, address: proxy.address },
      name,
      logger,
      wait: '10m',
    })
    discoveries.push(waiting)
    await waiting.ready()
    // the first list, then the blocking query the loop is parked in
    await eventually('the blocking query is sent', () => proxy.requests >= 2)
    // returning at all is the proof: the held query is aborted, not waited for (10 minutes, past the test's timeout)
    await waiting.close()
    await proxy.down()

    const neverReady = createDiscovery({ consul: { address: '127.0.0.1:9' }, name, logger })
    discoveries.push(neverReady)
    const ready = neverReady.ready()
    await neverReady.close()
    await expect(ready).rejects.toThrow(/closed before its first list/)
  })
})

describe('blocking-query rules', () => {
  it('when the index grows, then it is used; when it goes backwards or is missing, then it resets to 0; it is never below 1 after an answer', () => {
    expect(nextBlockingIndex(0, 42)).toBe(42)
    expect(nextBlockingIndex(42, 57)).toBe(57)
    expect(nextBlockingIndex(57, 57)).toBe(57)
    expect(nextBlockingIndex(57, 12)).toBe(0)
    expect(nextBlockingIndex(57, undefined)).toBe(0)
    expect(nextBlockingIndex(0, 0)).toBe(1)
  })

  it('when queries keep failing, then the retry delay doubles up to its cap, with at most 20% jitter', () => {
    const retry = { initialDelayMs: 250, maxDelayMs: 10_000 }
    const middle = () => 0.5
    expect([0, 1, 2, 3, 10].map((attempt) => retryDelayMs(attempt, retry, middle))).toEqual([
      250, 500, 1000, 2000, 10_000,
    ])
    expect(retryDelayMs(0, retry, () => 0)).toBe(200)
    expect(retryDelayMs(20, retry, () => 1)).toBe(12_000)
    expect(discoveryDefaults).toMatchObject({ wait: '55s' })
  })

  it('when an entry has no service address or weight, then the node address and weight 1 are used', () => {
    expect(
      instanceFromHealthEntry({
        Node: { Address: '10.0.0.7' },
        Service: { ID: 'a-1', Address: '', Port: 80, Tags: null, Meta: { weight: 'heavy' } },
      }),
    ).toEqual({ id: 'a-1', address: '10.0.0.7', port: 80, tags: [], meta: { weight: 'heavy' }, weight: 1 })
  })
})
