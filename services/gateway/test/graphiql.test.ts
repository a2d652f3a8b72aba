// GraphiQL through the gateway: content serves it at /graphiql in development only, and the gateway routes it (the
// page and the scripts below it) to content in development only; elsewhere it is not a public path (404).
import { expectErrorEnvelope, fetchedAnswer, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { developmentRoutes, publicRoutes } from '../src/proxy/route-table.ts'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

// a stand-in for content (it counts every path it is asked for), under a name of this test's own
const content = uniqueName('gw-content')
const gateways: TestGateway[] = []
let upstream: UpstreamProcess

/**
 * A gateway with its own route table (none given), content mapped to the stand-in. The test's engines are the
 * development ones, plaintext on this machine's loopback: allowed, so that production starts on them.
 */
async function gatewayIn(environment: string): Promise<TestGateway> {
  const gateway = await startGateway({
    env: {
      NODE_ENV: environment,
      ENGINES_PLAINTEXT_ALLOWED: 'true',
      GATEWAY_SERVICE_NAMES: `content=${content}`,
    },
  })
  gateways.push(gateway)
  await eventually(() => gateway.app.upstreams.get('content')?.status().instances === 1)
  return gateway
}

beforeAll(async () => {
  upstream = await startUpstream({ name: content, label: 'content' })
})

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()))
  await upstream?.stop()
  await upstream?.deregister()
})

describe('GraphiQL through the gateway', () => {
  it('when the environment is development, then /graphiql is routed to content; in test and production it is not', () => {
    expect(developmentRoutes).toEqual([{ prefix: '/graphiql', service: 'content' }])
    expect(publicRoutes('development')).toContainEqual({ prefix: '/graphiql', service: 'content' })
    for (const environment of ['test', 'production']) {
      expect(publicRoutes(environment).map((route) => route.prefix)).not.toContain('/graphiql')
    }
  })

  it('when the gateway runs in development, then the page and its scripts reach content', async () => {
    const gateway = await gatewayIn('development')
    for (const path of ['/graphiql', '/graphiql/main.js', '/graphiql/config.js']) {
      await fetch(`${gateway.url}${path}`).then((response) => response.body?.cancel())
    }
    const hits = await upstream.hits()
    expect(hits['GET /graphiql']).toBe(1)
    expect(hits['GET /graphiql/main.js']).toBe(1)
    expect(hits['GET /graphiql/config.js']).toBe(1)
  })

  it('when the gateway runs in production, then /graphiql is 404 NOT_FOUND from the gateway, and content is not asked', async () => {
    const gateway = await gatewayIn('production')
    const before = (await upstream.hits())['GET /graphiql'] ?? 0
    const answer = await fetchedAnswer(await fetch(`${gateway.url}/graphiql`))
    expect(expectErrorEnvelope(answer, 404, 'NOT_FOUND').message).toBe('Route GET /graphiql not found')
    // a path that only looks like it is not routed either (segment boundary)
    expect((await fetch(`${gateway.url}/graphiqlx`)).status).toBe(404)
    expect((await upstream.hits())['GET /graphiql'] ?? 0).toBe(before)
  })
})
