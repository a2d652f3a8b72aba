// A service in maintenance behind the gateway: its 503 with Retry-After reaches the client as it is, and counts as no
// failure, so the instance is neither ejected nor its circuit opened, and traffic flows the moment it is off. The same
// for a service whose dependency is unavailable: its 503 names the dependency, and its other routes keep being served;
// and for a service that sheds load on purpose (the order service's admission): its 503 is relayed, nothing counted.
import { loadShedHeader, maintenanceHeader, unavailableDependencyHeader } from '@meridian/contracts'
import { expectErrorEnvelope, fetchedAnswer, scaledMs, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestGateway } from './support/gateway.ts'
import { type SingleUpstream, startSingleUpstream } from './support/single-upstream.ts'
import type { UpstreamProcess } from './support/upstream-process.ts'

let single: SingleUpstream
let gateway: TestGateway
let upstream: UpstreamProcess

beforeAll(async () => {
  single = await startSingleUpstream(uniqueName('gw-maintenance-users'), 'users')
  ;({ gateway, upstream } = single)
}, scaledMs(60_000))

afterAll(async () => {
  await single?.close()
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
    expect(single.status()).toMatchObject({ ejected: [], circuit: 'closed' })

    await upstream.setMaintenance(false)
    expect((await call()).status).toBe(200)
  })

  it("when a service's dependency has no instance, then each call gets its 503 naming the dependency, nothing is ejected or opened, and its other routes are answered at once", async () => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const response = await fetch(`${gateway.url}/api/v1/users/dependency-down`)
      expect(response.headers.get(unavailableDependencyHeader)).toBe('ledger')
      const error = expectErrorEnvelope(await fetchedAnswer(response), 503, 'SERVICE_UNAVAILABLE')
      expect(error.message).toBe('ledger is unavailable: no healthy instance')
    }
    expect(single.status()).toMatchObject({ ejected: [], circuit: 'closed' })
    expect((await fetch(`${gateway.url}/api/v1/users/whoami`)).status).toBe(200)
  })

  it('when a service sheds load on purpose, then each call gets its 503 with Retry-After as it was, nothing is ejected or opened, and its next answer is relayed at once', async () => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const response = await fetch(`${gateway.url}/api/v1/users/shedding`)
      expect(response.headers.get(loadShedHeader)).toBe('orders')
      expect(response.headers.get('retry-after')).toBe('1')
      const error = expectErrorEnvelope(await fetchedAnswer(response), 503, 'SERVICE_UNAVAILABLE')
      expect(error.message).toBe('Orders are arriving faster than they can be fulfilled: try again shortly')
    }
    expect(single.status()).toMatchObject({ ejected: [], circuit: 'closed' })
    expect((await fetch(`${gateway.url}/api/v1/users/whoami`)).status).toBe(200)
  })
})
