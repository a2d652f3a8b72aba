// SERVICE_CREDENTIAL rotated as docs/how-to/rotating-secrets.md says — `old`, then `old,new` on every instance, then
// `new,old`, then `new` — by rolling restarts of two instances of a service, each calling the other's /internal/ route
// and its own with the kit's upstream client all along: no call is refused. And the same rotation with its first step
// skipped: an instance still on `old` alone refuses the new one's calls, which shows the traffic would see a refusal.
import type { AddressInfo } from 'node:net'
import { AppError } from '@meridian/contracts'
import { rotateUnderTraffic, uniqueName } from '@meridian/testkit'
import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { createServiceApp, createUpstreamClient, type ServiceApp, type UpstreamClient } from '../src/index.ts'

const oldCredential = 'the-old-service-credential-0123456789abcdefghij'
const newCredential = 'the-new-service-credential-0123456789abcdefghij'

/** An instance of the service: its app listening with `credential`, and its client of the service sending the first. */
interface Instance {
  app: ServiceApp
  url: string
  credential: string
  clients: Map<string, UpstreamClient>
}

async function start(credential: string): Promise<Instance> {
  const app = await createServiceApp({
    name: uniqueName('rotation'),
    version: '1.0.0',
    environment: 'test',
    logLevel: 'silent',
    rateLimit: false,
    serviceCredential: credential,
  })
  app.post('/internal/echo', { schema: { body: Type.Object({ word: Type.String() }) } }, async (request) => ({
    word: request.body.word,
  }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return { app, url: `http://127.0.0.1:${port}`, credential, clients: new Map() }
}

async function stop(instance: Instance): Promise<void> {
  for (const client of instance.clients.values()) await client.close()
  instance.clients.clear()
  await instance.app.close()
}

/** `from` calls `to`'s /internal/echo with its own client (its configured credential's first entry). */
async function call(from: Instance, to: Instance): Promise<number> {
  let client = from.clients.get(to.url)
  if (!client) {
    client = createUpstreamClient({ name: 'rotation', baseUrl: to.url, serviceCredential: from.credential })
    from.clients.set(to.url, client)
  }
  // a refusal of the credential rejects as the 401 it was (relayed), anything else as the kit maps it
  return client
    .request({ method: 'POST', path: '/internal/echo', body: { word: 'hi' }, relayStatuses: [401] })
    .then(({ status }) => status)
    .catch((error: unknown) => (error instanceof AppError ? error.statusCode : Number.NaN))
}

/**
 * Two instances rolled through `steps` (settings of SERVICE_CREDENTIAL) while each live one calls every live one, its
 * own included: the refused calls and the calls made.
 */
const rotate = (steps: string[]) =>
  rotateUnderTraffic<Instance>(
    {
      initial: { instances: oldCredential, clientSends: oldCredential },
      start,
      stop,
      async visit(to, live) {
        const outcomes: (string | undefined)[] = []
        for (const from of live) {
          const status = await call(from, to)
          outcomes.push(
            status === 200
              ? undefined
              : `${from.credential.slice(8, 11)} -> ${to.credential.slice(8, 11)}: ${status}`,
          )
        }
        return outcomes
      },
    },
    steps.map((instances) => ({ instances })),
  )

describe('SERVICE_CREDENTIAL rotated under traffic', () => {
  it('when two instances move from `old` to `old,new`, `new,old` and `new` one at a time, then none of their calls to each other is refused', async () => {
    const { refused, requests } = await rotate([
      `${oldCredential},${newCredential}`,
      `${newCredential},${oldCredential}`,
      newCredential,
    ])
    expect(refused).toEqual([])
    // 3 steps × 2 replacements, each after at least 8 calls among the live pair
    expect(requests).toBeGreaterThanOrEqual(3 * 2 * 8)
  })

  it('when the first step is skipped (`new,old` while an instance has `old` alone), then that instance refuses the other one’s calls', async () => {
    const { refused } = await rotate([`${newCredential},${oldCredential}`, newCredential])
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.every((line) => line.endsWith(': 401'))).toBe(true)
  })
})
