// Registration against the real Consul agent: the stored entry, spec default checks, heartbeats tied to readiness.
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { consulApi, eventually, infraEndpoints, uniqueName } from '@meridian/testkit'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import {
  type RegisterServiceOptions,
  registerService,
  registrationDefaults,
  type ServiceRegistration,
  serviceDefinition,
} from '../src/registry/service-registration.ts'

const { baseUrl, headers } = consulApi()
const { consulHttpAddr, consulToken } = infraEndpoints()
const consulSettings = { address: consulHttpAddr, ...(consulToken ? { token: consulToken } : {}) }
const shortTiming = { ttl: '3s', heartbeatIntervalMs: 300, httpCheckInterval: '1s', httpCheckTimeout: '1s' }

interface AgentService {
  ID: string
  Service: string
  Address: string
  Port: number
  Tags: string[]
  Meta: Record<string, string>
}
interface AgentCheck {
  CheckID: string
  Name: string
  Status: string
  Output: string
  ServiceID: string
  Type: string
  Interval: string
  Timeout: string
}
interface HealthEntry {
  Service: { ID: string }
}

async function consulGet<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${path}`, { headers })
  return { status: response.status, body: (response.ok ? await response.json() : undefined) as T }
}

async function passingIds(service: string): Promise<string[]> {
  const { body } = await consulGet<HealthEntry[]>(`/v1/health/service/${service}?passing=true`)
  return body.map((entry) => entry.Service.ID).sort()
}

async function checksOf(serviceId: string): Promise<AgentCheck[]> {
  const { body } = await consulGet<Record<string, AgentCheck>>('/v1/agent/checks')
  return Object.values(body)
    .filter((check) => check.ServiceID === serviceId)
    .sort((a, b) => a.CheckID.localeCompare(b.CheckID))
}

/** A pino logger whose lines are kept for assertions (pino levels: 30 info, 40 warn). */
function recordingLogger() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, lines }
}

async function listen(server: Server, port = 0): Promise<number> {
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

/** The instance's own HTTP side: /health/ready answers 200 while `ready`, else 503 (what Consul's HTTP check probes). */
async function startInstanceServer() {
  const state = { ready: true }
  const server = createServer((request, response) => {
    if (request.url === '/health/ready') {
      response.writeHead(state.ready ? 200 : 503, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ status: state.ready ? 'ready' : 'not_ready' }))
    } else {
      response.writeHead(404).end()
    }
  })
  const port = await listen(server)
  return { state, server, port }
}

/** An HTTP proxy in front of the real Consul that keeps every request it forwards. */
async function startRecordingProxy() {
  const requests: { method: string; url: string; body: string; token: string | undefined }[] = []
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString()
    const token = request.headers['x-consul-token']
    requests.push({ method: request.method ?? '', url: request.url ?? '', body, token: token?.toString() })
    const upstream = await fetch(`${baseUrl}${request.url}`, {
      method: request.method ?? 'GET',
      headers: { ...headers, 'content-type': request.headers['content-type'] ?? 'application/json' },
      ...(body ? { body } : {}),
    })
    const index = upstream.headers.get('x-consul-index')
    response.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'text/plain',
      ...(index ? { 'x-consul-index': index } : {}),
    })
    response.end(Buffer.from(await upstream.arrayBuffer()))
  })
  const port = await listen(server)
  return { requests, server, address: `127.0.0.1:${port}` }
}

describe('registerService', () => {
  const registrations: ServiceRegistration[] = []
  const servers: Server[] = []

  afterAll(async () => {
    await Promise.allSettled(registrations.map((registration) => registration.deregister()))
    for (const server of servers) server.close()
  })

  async function registerInstance(overrides: Partial<RegisterServiceOptions> = {}) {
    const instance = await startInstanceServer()
    servers.push(instance.server)
    const { logger, lines } = recordingLogger()
    const name = overrides.name ?? uniqueName('svc-reg')
    const registration = await registerService({
      consul: consulSettings,
      name,
      address: '127.0.0.1',
      port: instance.port,
      tags: ['meridian', 'test'],
      meta: { version: '1.2.3', region: 'eu-west', az: 'eu-west-1a', protocol: 'http', weight: 3 },
      readiness: async () => instance.state.ready,
      logger,
      timing: shortTiming,
      ...overrides,
    })
    registrations.push(registration)
    return { name, registration, instance, lines }
  }

  it('when an instance registers, then the agent lists it with its address, port, tags and meta (weight as a string) and both checks', async () => {
    const { name, registration, instance } = await registerInstance()

    expect(registration.id).toMatch(new RegExp(`^${name}-127\\.0\\.0\\.1-${instance.port}-[0-9a-f]{8}$`))
    const { body: stored } = await consulGet<AgentService>(`/v1/agent/service/${registration.id}`)
    expect(stored).toMatchObject({
      ID: registration.id,
      Service: name,
      Address: '127.0.0.1',
      Port: instance.port,
      Tags: ['meridian', 'test'],
      Meta: { version: '1.2.3', region: 'eu-west', az: 'eu-west-1a', protocol: 'http', weight: '3' },
    })
    const checks = await checksOf(registration.id)
    expect(checks.map((check) => [check.CheckID, check.Type])).toEqual([
      [registration.checkIds.http, 'http'],
      [registration.checkIds.ttl, 'ttl'],
    ])
  })

  it('when the same service registers twice on one address and port, then each instance gets its own id', async () => {
    const name = uniqueName('svc-twice')
    const first = await registerInstance({ name })
    const second = await registerInstance({ name, port: first.instance.port })
    expect(second.registration.id).not.toBe(first.registration.id)
  })

  it('when registered without timing options, then Consul receives the spec defaults: TTL 30s with the HTTP check of /health/ready every 10s, timeout 2s, deregister after 60s', async () => {
    const proxy = await startRecordingProxy()
    servers.push(proxy.server)
    const instance = await startInstanceServer()
    servers.push(instance.server)
    const { logger } = recordingLogger()
    const registration = await registerService({
      consul: { address: proxy.address, token: 'acl-token-for-the-record' },
      name: uniqueName('svc-defaults'),
      address: '127.0.0.1',
      port: instance.port,
      meta: { version: '1.0.0', region: 'local', az: 'local-a' },
      readiness: async () => true,
      logger,
    })
    registrations.push(registration)

    expect(registrationDefaults).toEqual({
      ttl: '30s',
      heartbeatIntervalMs: 10_000,
      readinessPath: '/health/ready',
      httpCheckInterval: '10s',
      httpCheckTimeout: '2s',
      failuresBeforeCritical: 3,
      deregisterCriticalServiceAfter: '60s',
    })
    const sent = proxy.requests.find((request) => request.url === '/v1/agent/service/register')
    expect(sent?.method).toBe('PUT')
    expect(sent?.token).toBe('acl-token-for-the-record')
    const payload = JSON.parse(sent?.body ?? '{}') as { Meta: unknown; Checks: unknown[] }
    expect(payload.Meta).toEqual({
      version: '1.0.0',
      region: 'local',
      az: 'local-a',
      protocol: 'http',
      weight: '1',
    })
    expect(payload.Checks).toEqual([
      expect.objectContaining({
        CheckID: registration.checkIds.ttl,
        TTL: '30s',
        DeregisterCriticalServiceAfter: '60s',
      }),
      expect.objectContaining({
        CheckID: registration.checkIds.http,
        HTTP: `http://127.0.0.1:${instance.port}/health/ready`,
        Interval: '10s',
        Timeout: '2s',
        Status: 'passing',
        FailuresBeforeCritical: 3,
        DeregisterCriticalServiceAfter: '60s',
      }),
    ])
    // what Consul shows of what it stored (it does not echo TTL or the deregister delay)
    const checks = await checksOf(registration.id)
    expect(checks.find((check) => check.Type === 'http')).toMatchObject({ Interval: '10s', Timeout: '2s' })
    expect(checks.find((check) => check.Type === 'ttl')).toMatchObject({ Status: 'passing' })
    // the first heartbeat went out with the registration
    expect(proxy.requests.map((request) => `${request.method} ${request.url.split('?')[0]}`)).toContain(
      `PUT /v1/agent/check/pass/${encodeURIComponent(registration.checkIds.ttl)}`,
    )

    await registration.deregister()
    expect(proxy.requests.at(-1)).toMatchObject({
      method: 'PUT',
      url: `/v1/agent/service/deregister/${registration.id}`,
    })
  })

  it('when readiness resolves true and /health/ready answers 200, then heartbeats make the instance appear among passing instances', async () => {
    const { name, registration } = await registerInstance()
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([registration.id])
  })

  it('when a ready instance has registered, then it is among the passing instances at once, before the readiness check’s first round', async () => {
    const { name, registration } = await registerInstance({
      timing: { ...shortTiming, httpCheckInterval: '10s' },
    })
    // no waiting: Consul runs the HTTP check first at a random moment within its 10 s interval
    expect(await passingIds(name)).toEqual([registration.id])
  })

  it('when an instance that is not ready registers, then it is not among the passing instances', async () => {
    const { name } = await registerInstance({ readiness: async () => false })
    expect(await passingIds(name)).toEqual([])
  })

  it('when readiness turns false, then the TTL check fails with a note and the instance leaves the passing list; when it turns true again, then the instance returns', async () => {
    const { name, registration, instance, lines } = await registerInstance()
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([registration.id])

    instance.state.ready = false
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([])
    // the HTTP check may take it out of the list first (Consul counts a warning as not passing): the heartbeat's
    // failing mark follows within its interval
    await expect
      .poll(async () => (await checksOf(registration.id)).find((check) => check.Type === 'ttl'), {
        timeout: 5000,
      })
      .toMatchObject({ Status: 'critical', Output: expect.stringContaining('not ready') })
    expect(lines).toContainEqual(expect.objectContaining({ level: 30, ready: false }))

    instance.state.ready = true
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([registration.id])
  })

  it('when readiness throws, then the TTL check is marked failing with the error in its note', async () => {
    const { registration } = await registerInstance({
      readiness: async () => {
        throw new Error('database unreachable')
      },
    })
    await expect
      .poll(async () => (await checksOf(registration.id)).find((check) => check.Type === 'ttl')?.Output, {
        timeout: 5000,
      })
      .toContain('readiness check threw: database unreachable')
  })

  it('when Consul forgets the instance, then heartbeats log a warning without throwing and register it again', async () => {
    const { name, registration, lines } = await registerInstance()
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([registration.id])

    const removed = await fetch(`${baseUrl}/v1/agent/service/deregister/${registration.id}`, {
      method: 'PUT',
      headers,
    })
    expect(removed.status).toBe(200)

    await expect
      .poll(() => lines.filter((line) => line.level === 40).map((line) => line.msg))
      .toContain('Consul heartbeat failed; trying again on the next beat')
    await expect.poll(async () => (await consulGet(`/v1/agent/service/${registration.id}`)).status).toBe(200)
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([registration.id])
  })

  it('when deregistered, then the instance and its checks are gone and deregistering again does nothing', async () => {
    // each heartbeat asks readiness first: counted, a heartbeat after deregistering would show
    let beats = 0
    const { name, registration } = await registerInstance({
      readiness: async () => {
        beats += 1
        return true
      },
    })
    await expect.poll(() => passingIds(name), { interval: 200 }).toEqual([registration.id])

    await registration.deregister()
    expect((await consulGet(`/v1/agent/service/${registration.id}`)).status).toBe(404)
    expect(await checksOf(registration.id)).toEqual([])
    expect(await passingIds(name)).toEqual([])
    await expect(registration.deregister()).resolves.toBeUndefined()

    // no heartbeat brings it back: while another instance of the same timing beats three times, this one never does
    const beatsWhenDeregistered = beats
    let witnessBeats = 0
    await registerInstance({
      readiness: async () => {
        witnessBeats += 1
        return true
      },
    })
    await eventually('another instance beats three times', () => witnessBeats >= 3)
    expect(beats).toBe(beatsWhenDeregistered)
    expect((await consulGet(`/v1/agent/service/${registration.id}`)).status).toBe(404)
  })

  it('when the heartbeat is not shorter than the TTL or the weight is not an integer, then registration is refused before Consul is called', async () => {
    await expect(registerInstance({ timing: { ttl: '1s', heartbeatIntervalMs: 1000 } })).rejects.toThrow(
      /shorter than the TTL/,
    )
    await expect(
      registerInstance({ meta: { version: '1', region: 'r', az: 'a', weight: 1.5 } }),
    ).rejects.toThrow(/meta.weight must be a non-negative integer/)
    await expect(registerInstance({ timing: { ttl: 'soon' } })).rejects.toThrow(/not a Consul duration/)
  })

  it('when the address is IPv6, then the readiness URL brackets it', () => {
    const definition = serviceDefinition(
      'svc-1',
      { name: 'svc', address: '::1', port: 3003, meta: { version: '1', region: 'r', az: 'a' } },
      registrationDefaults,
    )
    expect(definition.Checks[1]).toMatchObject({ HTTP: 'http://[::1]:3003/health/ready' })
  })
})
