// The Consul HTTP client against the real agent: addresses with or without scheme, the token header, named errors.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { infraEndpoints } from '@meridian/testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { ConsulRequestError, consulBaseUrl, createConsulClient } from '../src/registry/consul-client.ts'
import { consulDurationToMs } from '../src/registry/consul-duration.ts'

const { consulHttpAddr, consulToken } = infraEndpoints()
const tokenOption = consulToken ? { token: consulToken } : {}

describe('Consul client', () => {
  const consul = createConsulClient({ address: consulHttpAddr, ...tokenOption })
  afterAll(() => consul.close())

  it('when the address has no scheme, then http:// is assumed and the real agent answers', async () => {
    const bare = consulHttpAddr.replace(/^https?:\/\//, '')
    expect(consulBaseUrl(bare)).toBe(`http://${bare.replace(/\/+$/, '')}`)
    const client = createConsulClient({ address: bare, ...tokenOption })
    try {
      const leader = await client.get<string>('/v1/status/leader')
      expect(leader.status).toBe(200)
      expect(leader.body).toMatch(/:\d+$/)
    } finally {
      await client.close()
    }
  })

  it('when Consul answers JSON, then the body is parsed and X-Consul-Index is returned', async () => {
    const services = await consul.get<Record<string, string[]>>('/v1/catalog/services')
    expect(services.status).toBe(200)
    expect(services.index).toBeGreaterThan(0)
    expect(services.body).toHaveProperty('consul')
  })

  it('when Consul answers a non-2xx status, then the error names the method, the path and the status', async () => {
    const error = await consul.put('/v1/agent/check/pass/no-such-check').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConsulRequestError)
    expect(error).toMatchObject({
      method: 'PUT',
      path: '/v1/agent/check/pass/no-such-check',
      statusCode: 404,
    })
    expect((error as Error).message).toMatch(
      /^Consul PUT \/v1\/agent\/check\/pass\/no-such-check answered 404: /,
    )
  })

  it('when nothing listens at the address, then the error names the method and path and keeps the cause', async () => {
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const { port } = closed.address() as AddressInfo
    closed.close()
    await once(closed, 'close')

    const client = createConsulClient({ address: `127.0.0.1:${port}` })
    try {
      const error = await client.get('/v1/status/leader').catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ConsulRequestError)
      expect(error).toMatchObject({ method: 'GET', path: '/v1/status/leader', statusCode: undefined })
      expect((error as Error).message).toMatch(/^Consul GET \/v1\/status\/leader failed: .*ECONNREFUSED/)
      expect((error as Error).cause).toBeInstanceOf(Error)
    } finally {
      await client.close()
    }
  })

  it('when a token is configured, then every call carries it as X-Consul-Token', async () => {
    const seen: IncomingHttpHeaders[] = []
    const recorder = createServer((request, response) => {
      seen.push(request.headers)
      response.writeHead(200, { 'content-type': 'application/json', 'x-consul-index': '7' }).end('[]')
    })
    recorder.listen(0, '127.0.0.1')
    await once(recorder, 'listening')
    const { port } = recorder.address() as AddressInfo
    const client = createConsulClient({ address: `http://127.0.0.1:${port}/`, token: 'secret-acl-token' })
    try {
      const answer = await client.get('/v1/health/service/x', { query: { passing: true } })
      await client.put('/v1/agent/service/deregister/x')
      expect(answer).toEqual({ status: 200, body: [], index: 7 })
      expect(seen.map((headers) => headers['x-consul-token'])).toEqual([
        'secret-acl-token',
        'secret-acl-token',
      ])
    } finally {
      await client.close()
      recorder.close()
    }
  })
})

describe('Consul durations', () => {
  it('when a Go duration is given, then it is read as milliseconds', () => {
    expect(consulDurationToMs('55s')).toBe(55_000)
    expect(consulDurationToMs('1m30s')).toBe(90_000)
    expect(consulDurationToMs('300ms')).toBe(300)
    expect(consulDurationToMs('1.5h')).toBe(5_400_000)
  })

  it('when the text is not a duration, then it is refused', () => {
    for (const text of ['', '30', 's', '10 s', '5d', '1m-3s']) {
      expect(() => consulDurationToMs(text), text).toThrow(TypeError)
    }
  })
})
