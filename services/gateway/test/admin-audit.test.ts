// /api/v1/admin/audit: every service's audit trail in one, newest first. The gateway reads a page of each service's
// own trail (GET /api/v1/admin/audit/{service}, routed like any path) as the caller — their credential passed on —
// merges them, and names a service that did not answer instead of failing; anyone but an admin is refused first.
import { asAdmin, asUser, expectErrorEnvelope, tokenEnv, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

const entry = (service: string, id: string, at: string) => ({
  service,
  id,
  at,
  actor: 'user:0b7e1c2a-0000-4000-8000-000000000001',
  action: 'stock.adjusted',
  target: `product:${id}`,
  detail: {},
})

describe('gateway: /api/v1/admin/audit', () => {
  let gateway: TestGateway
  const upstreams: UpstreamProcess[] = []
  const alpha = uniqueName('audit-alpha')
  const beta = uniqueName('audit-beta')
  // routed, but no instance answers: the merged trail names it
  const gamma = uniqueName('audit-gamma')

  beforeAll(async () => {
    upstreams.push(
      await startUpstream({
        name: alpha,
        label: 'alpha',
        audit: [
          entry('alpha', '2', '2026-11-29T10:00:03.000003Z'),
          entry('alpha', '1', '2026-11-29T10:00:01.000001Z'),
        ],
      }),
      await startUpstream({
        name: beta,
        label: 'beta',
        audit: [entry('beta', '7', '2026-11-29T10:00:02.000002Z')],
      }),
    )
    gateway = await startGateway({
      routes: [
        { prefix: '/api/v1/admin/audit/alpha', service: alpha },
        { prefix: '/api/v1/admin/audit/beta', service: beta },
        { prefix: '/api/v1/admin/audit/gamma', service: gamma },
      ],
      env: { ...tokenEnv },
    })
    await eventually(
      () =>
        gateway.app.upstreams.get(alpha)?.status()?.instances === 1 &&
        gateway.app.upstreams.get(beta)?.status()?.instances === 1,
    )
  })

  afterAll(async () => {
    await gateway?.close()
    for (const upstream of upstreams) {
      await upstream.stop()
      await upstream.deregister()
    }
  })

  const read = (query: string, headers: Record<string, string>) =>
    gateway.app.inject({ method: 'GET', url: `/api/v1/admin/audit?${query}`, headers })

  it('when an admin reads it, then every service answering is merged newest first, and the next page goes on from the oldest shown', async () => {
    const first = await read('limit=2', asAdmin())
    expect(first.statusCode, first.body).toBe(200)
    const page = first.json() as {
      data: { service: string; id: string }[]
      next: string | null
      unavailable: string[]
    }
    expect(page.data.map((each) => `${each.service}:${each.id}`)).toEqual(['alpha:2', 'beta:7'])
    expect(page.unavailable).toEqual(['gamma'])
    expect(page.next).toBe('limit=2&before=2026-11-29T10%3A00%3A02.000002Z')

    const second = (await read(page.next ?? '', asAdmin())).json() as typeof page
    expect(second.data.map((each) => `${each.service}:${each.id}`)).toEqual(['alpha:1'])
    expect(second.next).toBeNull()
  })

  it('when anyone but an admin asks, then 401 without credentials and 403 for a user, before any service is asked', async () => {
    expectErrorEnvelope(
      await gateway.app.inject({ method: 'GET', url: '/api/v1/admin/audit' }),
      401,
      'UNAUTHORIZED',
    )
    expectErrorEnvelope(await read('', asUser()), 403, 'FORBIDDEN')
    expectErrorEnvelope(await read('limit=0', asAdmin()), 422, 'VALIDATION_ERROR')
  })
})
