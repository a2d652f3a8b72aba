// Consul is a real agent and behaves as Meridian's registry needs: TTL checks, health filtering, blocking queries.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { consulApi, uniqueName } from '../src/index.ts'

interface HealthEntry {
  Service: { ID: string; Service: string; Port: number }
  Checks: { CheckID: string; Status: string }[]
}

const { baseUrl, headers } = consulApi()

async function consul(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status} ${await response.text()}`)
  return response
}

async function passingInstances(service: string): Promise<{ ids: string[]; index: string }> {
  const response = await consul('GET', `/v1/health/service/${service}?passing=true`)
  const entries = (await response.json()) as HealthEntry[]
  return { ids: entries.map((e) => e.Service.ID).sort(), index: response.headers.get('x-consul-index') ?? '' }
}

function register(service: string, id: string, port: number, ttl: string) {
  return consul('PUT', '/v1/agent/service/register', {
    ID: id,
    Name: service,
    Address: '127.0.0.1',
    Port: port,
    Tags: ['smoke'],
    Meta: { version: '0.0.0', weight: '1' },
    Check: { CheckID: `service:${id}`, Name: 'ttl', TTL: ttl, DeregisterCriticalServiceAfter: '90s' },
  })
}

describe('consul smoke', () => {
  const service = uniqueName('smoke-svc')
  const registered: string[] = []

  afterAll(async () => {
    await Promise.all(registered.map((id) => consul('PUT', `/v1/agent/service/deregister/${id}`)))
  })

  it('when an instance with a TTL check passes it, then it is found among passing instances; when the TTL lapses, then it is excluded', async () => {
    const id = `${service}-ttl`
    await register(service, id, 4001, '2s')
    registered.push(id)
    // a TTL check starts critical until the first heartbeat
    expect((await passingInstances(service)).ids).toEqual([])

    await consul('PUT', `/v1/agent/check/pass/service:${id}?note=heartbeat`)
    expect((await passingInstances(service)).ids).toEqual([id])

    const all = (await (await consul('GET', `/v1/catalog/service/${service}`)).json()) as unknown[]
    expect(all).toHaveLength(1)

    // no more heartbeats: the check turns critical and discovery of healthy instances drops the instance
    await expect
      .poll(async () => (await passingInstances(service)).ids, { timeout: 15_000, interval: 250 })
      .toEqual([])
    const stillCatalogued = (await (
      await consul('GET', `/v1/catalog/service/${service}`)
    ).json()) as unknown[]
    expect(stillCatalogued).toHaveLength(1)
  })

  it('when a blocking query waits on a service, then it stays pending while nothing changes and returns with a newer index when an instance joins', async () => {
    const blockingService = uniqueName('smoke-watch')
    const first = `${blockingService}-1`
    await register(blockingService, first, 4002, '30s')
    registered.push(first)
    await consul('PUT', `/v1/agent/check/pass/service:${first}`)
    const before = await passingInstances(blockingService)
    expect(before.ids).toEqual([first])

    let settled = false
    const blocking = fetch(
      `${baseUrl}/v1/health/service/${blockingService}?passing=true&index=${before.index}&wait=30s`,
      { headers },
    ).then(async (response) => {
      settled = true
      return {
        index: response.headers.get('x-consul-index') ?? '',
        ids: ((await response.json()) as HealthEntry[]).map((e) => e.Service.ID).sort(),
      }
    })

    await sleep(1000)
    expect(settled).toBe(false)

    const second = `${blockingService}-2`
    await register(blockingService, second, 4003, '30s')
    registered.push(second)
    await consul('PUT', `/v1/agent/check/pass/service:${second}`)

    const after = await blocking
    expect(Number(after.index)).toBeGreaterThan(Number(before.index))
    // the query may wake on the registration (second still critical) or on its first heartbeat
    expect(after.ids.includes(first)).toBe(true)
    await expect
      .poll(async () => (await passingInstances(blockingService)).ids)
      .toEqual([first, second].sort())
  })
})
