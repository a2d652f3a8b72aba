// A service in maintenance behind the gateway: its 503 with Retry-After reaches the client as it is, and counts as no
// failure, so the instance is neither ejected nor its circuit opened, and traffic flows the moment it is off.
import { maintenanceHeader } from '@meridian/contracts'
import { expectErrorEnvelope, fetchedAnswer, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

const users = uniqueName('gw-maintenance-users')

let gateway: TestGateway
let upstream: UpstreamProcess

beforeAll(async () => {
  upstream = await startUpstream({ name: users, label: 'u', segment: 'users' })
  gateway = await startGateway({ routes: [{ prefix: '/api/v1/users', service: users }] })
  await eventually(() => gateway.app.upstreams.get(users)?.status().instances === 1)
}, 60_000)

afterAll(async () => {
  await gateway?.close()
  await upstream?.stop()
  await upstream?.deregister()
})

describe('maintenance behind the gateway', () => {
  it('when the only instance is in maintenance, then every call gets its 503 with Retry-After, nothing is ejected or opened, and the first call after it ends is answered', async () => {
    const call = () => fetch(`${gateway.url}/api/v1/users/whoami`)
    expect((await call()).status).toBe(200)

    await upstream.setMaintenance(true)
    // more calls than it takes to eject an instance (3) and to open the circuit (5)
    for (let attempt = 0; attempt < 8; attempt++) {
      const response = await call()
      expect(response.headers.get('retry-after')).toBe('30')
      expect(response.headers.get(maintenanceHeader)).toBe('on')
      const error = expectErrorEnvelope(await fetchedAnswer(response), 503, 'SERVICE_UNAVAILABLE')
      expect(error.message).toBe('Planned maintenance')
    }
    expect(gateway.app.upstreams.get(users)?.status()).toMatchObject({ ejected: [], circuit: 'closed' })

    await upstream.setMaintenance(false)
    expect((await call()).status).toBe(200)
  })
})
