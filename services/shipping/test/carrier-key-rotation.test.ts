// SHIPPING_CARRIER_KEYS rotated as docs/how-to/rotating-secrets.md says — the carrier's new key added beside the old
// one on every instance, the carrier moved to the new key, the old one removed — by rolling restarts of two instances
// while the carrier reports deliveries to both all along: none is refused. And the same with the carrier moved too late
// (the old key removed first): the instances refuse it, which shows the traffic would see a refusal. A report names a
// shipment no instance has, so an accepted key answers 404 and a refused one 401 (the key is checked first).
import { randomUUID } from 'node:crypto'
import { type RotationStep, rotateUnderTraffic, tokenEnv } from '@meridian/testkit'
import { describe, expect, it } from 'vitest'
import { buildShippingTestApp, type ShippingTestApp } from './support/app.ts'

const oldKey = `old-carrier-key-${randomUUID()}`
const newKey = `new-carrier-key-${randomUUID()}`

const rotate = (steps: RotationStep[], replicas = 2) =>
  rotateUnderTraffic<ShippingTestApp>(
    {
      replicas,
      initial: { instances: oldKey, clientSends: oldKey },
      start: (keys) => buildShippingTestApp({ ...tokenEnv, SHIPPING_CARRIER_KEYS: keys }),
      stop: (instance) => instance.close(),
      async visit(instance, _live, sent) {
        const answer = await instance.app.inject({
          method: 'POST',
          url: `/api/v1/shipments/${randomUUID()}/deliver`,
          headers: { 'x-carrier-key': sent },
        })
        return [answer.statusCode === 404 ? undefined : `${sent.slice(0, 3)}: ${answer.statusCode}`]
      },
    },
    steps,
  )

describe('SHIPPING_CARRIER_KEYS rotated under traffic', () => {
  it("when the new key is added beside the old, the carrier moves to it, then the old key is removed, then none of the carrier's reports is refused", async () => {
    const { refused, requests } = await rotate([
      { instances: `${oldKey},${newKey}` },
      { clientSends: newKey },
      { instances: newKey },
    ])
    expect(refused).toEqual([])
    // two rolling restarts of two replacements, each after at least 8 reports, and the move after 4
    expect(requests).toBeGreaterThanOrEqual(4 * 8 + 4)
  })

  it('when the old key is removed before the carrier moves, then its reports are refused with 401', async () => {
    const { refused } = await rotate([{ instances: newKey }, { clientSends: newKey }], 1)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.every((line) => line === 'old: 401')).toBe(true)
  })
})
