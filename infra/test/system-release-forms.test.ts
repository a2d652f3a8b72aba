// Which forms a run from a release starts: its sources (development) or its images (meridian/<name>:<version>), not
// this tree's production build; and an upgrade to another tree of sources is not one of images. Refused by name
// before anything starts.
import { describe, expect, it } from 'vitest'
import { startSystem } from '../src/system/index.ts'

// addresses nothing listens on: the refusals come before any of them is reached
const baseEnv = {
  DATABASE_URL: 'postgres://meridian@127.0.0.1:1/meridian',
  KAFKA_BROKERS: '127.0.0.1:1',
  CONSUL_HTTP_ADDR: '127.0.0.1:1',
  REDIS_URL: 'redis://127.0.0.1:1',
}
const release = { version: '0.1.0', root: '/nonexistent/releases/0.1.0' }

describe('a run from a release', () => {
  it('when it is asked for in the production form, then it is refused: the release has no build in this tree', async () => {
    await expect(startSystem({ baseEnv, release, form: 'production', gatewayPort: 1 })).rejects.toThrow(
      'a run from release 0.1.0 starts the development or images form, not production',
    )
  })

  it('when the images form is asked to move instances to another tree of sources, then it is refused', async () => {
    const upgradeTo = { label: 'a broken tree', root: '/nonexistent/tree' }
    await expect(
      startSystem({ baseEnv, release, upgradeTo, form: 'images', gatewayPort: 1 }),
    ).rejects.toThrow(
      "upgradeTo is a tree of sources: a run of the images form moves instances to this tree's images",
    )
  })
})
