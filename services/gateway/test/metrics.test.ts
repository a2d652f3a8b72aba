// The gateway's /metrics is the public one of the spec (Health and operations): its JSON counters when the request
// does not choose, Prometheus text for a scraper or whoever asks for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGateway, type TestGateway } from './support/gateway.ts'

let gateway: TestGateway

beforeAll(async () => {
  gateway = await startGateway({ routes: [] })
})

afterAll(async () => {
  await gateway?.close()
})

describe('the gateway /metrics', () => {
  it('when a client asks without a preference (no Accept, */*), then the spec JSON counters', async () => {
    for (const headers of [{}, { accept: '*/*' }]) {
      const response = await fetch(`${gateway.url}/metrics`, { headers })
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await response.json()).toEqual({
        totalConnections: expect.any(Number),
        activeConnections: expect.any(Number),
        messagesReceived: expect.any(Number),
        messagesSent: expect.any(Number),
      })
    }
  })

  it('when Prometheus scrapes it (OpenMetrics first, text/plain next), then every metric as Prometheus text', async () => {
    const response = await fetch(`${gateway.url}/metrics`, {
      headers: {
        accept:
          'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
      },
    })
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(await response.text()).toMatch(/http_requests_received_total\{service="gateway"\} \d+/)
  })
})
