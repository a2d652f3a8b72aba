// The operators' API of every process (/admin/processes) in an app built as a service builds its own: the chassis,
// its database with the process tables, registerProcesses (manager, clock, escalation counter and routes); driven as
// an admin, a user and nobody, with bad queries and forged tokens, through inject and a raw socket.
import { createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { ProcessInstance } from '@meridian/contracts'
import { createDatabase, type Queryable, type Sql, transaction } from '@meridian/db'
import { createEvent, type EventHandler, migrateEventTables } from '@meridian/events'
import {
  createServiceApp,
  loadConfig,
  migrateAuditLog,
  ownStoresEnv,
  type ServiceApp,
  serviceAppOptions,
  serviceEnv,
} from '@meridian/service-kit'
import {
  asAdmin,
  asUser,
  buildServiceTestApp,
  eventually,
  expectErrorEnvelope,
  rawJsonPost,
  type ServiceTestApp,
  tokenEnv,
} from '@meridian/testkit'
import type { onRequestHookHandler } from 'fastify'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateProcessTables, type ProcessManager, registerProcesses } from '../src/index.ts'
import {
  beginRenewal,
  createSubscriptionsTable,
  newSubscriptionKey,
  renewalProcess,
  renewalStarted,
  renewalType,
} from './support/renewal.ts'

const TestEnv = serviceEnv({
  ...ownStoresEnv({ port: 0, database: 'processes' }),
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 10, default: 50 }),
})

type ProcessesApp = ServiceTestApp<
  ReturnType<typeof loadTestConfig>,
  Sql,
  { app: ServiceApp; processes: ProcessManager }
>
const loadTestConfig = (env: Record<string, string>) => loadConfig(TestEnv, env)

let built: ProcessesApp
let port: number

beforeAll(async () => {
  built = await buildServiceTestApp({
    service: 'process_routes',
    loadConfig: loadTestConfig,
    env: { ...tokenEnv },
    connect: (url) => createDatabase(url, { applicationName: 'process-routes-test' }),
    migrate: async (sql) => {
      await migrateEventTables(sql)
      await migrateProcessTables(sql)
      // operators' actions are appended to the service's audit trail
      await migrateAuditLog(sql)
      await createSubscriptionsTable(sql)
    },
    build: async ({ config, sql, redis, logStream }) => {
      const app = await createServiceApp(
        serviceAppOptions(
          { config, sql, redis, logStream },
          { name: 'process-routes', description: 'the process module under test' },
        ),
      )
      const processes = await registerProcesses(app, {
        sql,
        processes: [renewalProcess],
        sweepIntervalMs: config.SWEEP_INTERVAL_MS,
        // credentials first (401 before any validation answers), then the admin role (403)
        adminOnly: [
          app.authenticate as onRequestHookHandler,
          app.requireRole('admin') as onRequestHookHandler,
        ],
      })
      return { app, processes }
    },
  })
  await built.app.listen({ port: 0, host: '127.0.0.1' })
  port = (built.app.server.address() as AddressInfo).port
})

afterAll(async () => {
  await built?.close()
})

async function begin(): Promise<string> {
  const key = newSubscriptionKey()
  await beginRenewal(
    built.sql,
    (tx: Queryable, owner) =>
      built.processes.start(renewalType, key, renewalStarted(owner.periods), tx, { owner }),
    key,
  )
  return key
}

async function deliver<Type extends 'payment.processed' | 'inventory.reserved'>(
  type: Type,
  data: Parameters<typeof createEvent<Type>>[1],
) {
  const handler = built.processes.handlers()[type] as EventHandler<Type>
  await transaction(built.sql, (tx) =>
    handler(createEvent(type, data, { source: 'routes-test' }), tx, {
      topic: 'test',
      partition: 0,
      offset: '0',
      attempt: 1,
    }),
  )
}

/** A renewal charged and extended: final, nothing awaited. */
async function renewed(): Promise<string> {
  const key = await begin()
  await deliver('payment.processed', {
    orderId: key,
    customerId: 'customer-1',
    total: 9.9,
    items: [{ productId: 'plan-monthly', quantity: 1, price: 9.9 }],
    paymentId: 'pay-1',
  })
  await deliver('inventory.reserved', { orderId: key, reservationId: 'res-1', items: [] })
  return key
}

const inject = (
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string> = asAdmin(),
  payload?: unknown,
) =>
  built.app.inject(
    payload === undefined ? { method, url, headers } : { method, url, headers, payload: payload as object },
  )

const base = '/api/v1/admin/processes'

/** Every route of the operators' API, for the same key. */
const everyRoute = (key: string) =>
  [
    ['GET', `${base}/types`],
    ['GET', base],
    ['GET', `${base}/renewal/${key}`],
    ['POST', `${base}/renewal/${key}/retry`],
    ['POST', `${base}/renewal/${key}/compensate`],
  ] as const

/** An HS256 token with an admin's claims signed with a secret that is not the app's. */
function forgedAdminToken(): string {
  const now = Math.floor(Date.now() / 1000)
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const input = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({
    sub: 'intruder',
    role: 'admin',
    iat: now,
    exp: now + 600,
    iss: tokenEnv.JWT_ISSUER,
    aud: tokenEnv.JWT_AUDIENCE,
  })}`
  return `${input}.${createHmac('sha256', 'not-the-secret-of-this-app-but-32-characters-long').update(input).digest('base64url')}`
}

async function stateOf(key: string) {
  const [row] = await built.sql<{ state: string; attempt: number; steps: number }[]>`
    select state, attempt, (select count(*)::int from process_steps s where s.type = p.type and s.key = p.key) as steps
    from process_instances p where type = ${renewalType} and key = ${key}`
  return row
}

describe('who may call', () => {
  it('when a request has no credentials or a forged token, then every route answers 401', async () => {
    const key = await begin()
    for (const [method, url] of everyRoute(key)) {
      expectErrorEnvelope(await inject(method, url, {}), 401, 'UNAUTHORIZED', { context: `${method} ${url}` })
      expectErrorEnvelope(
        await inject(method, url, { authorization: `Bearer ${forgedAdminToken()}` }),
        401,
        'UNAUTHORIZED',
        { context: `${method} ${url} (forged)` },
      )
    }
  })

  it('when a user who is not an admin calls, then every route answers 403 and nothing changes', async () => {
    const key = await begin()
    const before = await stateOf(key)
    for (const [method, url] of everyRoute(key)) {
      expectErrorEnvelope(await inject(method, url, asUser()), 403, 'FORBIDDEN', {
        context: `${method} ${url}`,
      })
    }
    expect(await stateOf(key)).toEqual(before)
  })

  it('when a raw request compensates with a forged token or as a user, then 401 or 403 and the instance is unchanged', async () => {
    const key = await begin()
    const before = await stateOf(key)
    const path = `${base}/renewal/${key}/compensate`
    const body = { reason: 'hostile' }
    expectErrorEnvelope(
      await rawJsonPost(port, path, body, [['Authorization', `Bearer ${forgedAdminToken()}`]]),
      401,
      'UNAUTHORIZED',
    )
    expectErrorEnvelope(
      await rawJsonPost(port, path, body, [['Authorization', 'Bearer none']]),
      401,
      'UNAUTHORIZED',
    )
    expectErrorEnvelope(
      await rawJsonPost(port, path, body, [['Authorization', asUser().authorization]]),
      403,
      'FORBIDDEN',
    )
    expect(await stateOf(key)).toEqual(before)
  })
})

describe('reading', () => {
  it('when an admin asks for the types, then each declared process comes with its states and steps', async () => {
    const answer = await inject('GET', `${base}/types`)
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({
      data: [
        {
          type: 'renewal',
          description: renewalProcess.description,
          states: ['renewing', 'charged', 'renewed', 'cancelled', 'refunding', 'refunded'],
          finalStates: ['renewed', 'cancelled', 'refunded'],
          steps: [
            { name: 'charge', kind: 'forward', attempts: 3, deadlineMs: 60_000 },
            { name: 'extend', kind: 'forward', attempts: 2, deadlineMs: 60_000 },
            { name: 'refund', kind: 'compensation', attempts: 2, deadlineMs: 60_000 },
          ],
        },
      ],
    })
    const alias = await inject('GET', '/api/admin/processes/types')
    expect(alias.statusCode).toBe(200)
  })

  it('when an admin lists by type and state, then the page holds those instances with links to the next', async () => {
    const keys = [await renewed(), await renewed(), await renewed()]
    const answer = await inject('GET', `${base}?type=renewal&state=renewed&limit=2`)
    expect(answer.statusCode).toBe(200)
    const page = answer.json() as {
      data: ProcessInstance[]
      meta: Record<string, number>
      links: Record<string, string | null>
    }
    expect(page.data.map((each) => each.id)).toEqual([keys[2], keys[1]])
    expect(page.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 })
    expect(page.links.next).toMatch(/^\/api\/v1\/admin\/processes\?.*page=2/)
    const next = await inject('GET', page.links.next ?? '')
    expect((next.json() as { data: ProcessInstance[] }).data.map((each) => each.id)).toEqual([keys[0]])
  })

  it('when an admin reads one instance, then it comes with its log and links', async () => {
    const key = await begin()
    const answer = await inject('GET', `${base}/renewal/${key}`)
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toMatchObject({
      type: 'renewal',
      id: key,
      state: 'renewing',
      step: 'charge',
      escalated: false,
      log: [{ step: 'charge', outcome: 'requested', attempt: 1 }],
      _links: {
        self: { href: `${base}/renewal/${key}`, method: 'GET' },
        retry: { href: `${base}/renewal/${key}/retry`, method: 'POST' },
        compensate: { href: `${base}/renewal/${key}/compensate`, method: 'POST' },
      },
    })
  })

  it('when the type or the instance is unknown, then 404', async () => {
    const key = await begin()
    expectErrorEnvelope(await inject('GET', `${base}/renewal/sub-nobody-has-this-one`), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('GET', `${base}/subscription/${key}`), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('GET', `${base}?type=subscription`), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await inject('POST', `${base}/renewal/sub-nobody-has-this-one/retry`),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(
      await inject('POST', `${base}/subscription/${key}/compensate`, asAdmin(), {}),
      404,
      'NOT_FOUND',
    )
  })

  it("when a query or a path is malformed, then 422 (414 for a path parameter past the router's bound)", async () => {
    for (const query of [
      'state=Renewed!',
      `state=${'a'.repeat(41)}`,
      'limit=0',
      'limit=1000000',
      'page=0',
      'escalated=maybe',
      'compensation=partly',
      'sort=key:asc',
      'type=Renewal',
      'where=1',
    ]) {
      expectErrorEnvelope(await inject('GET', `${base}?${query}`), 422, 'VALIDATION_ERROR', {
        context: query,
      })
    }
    for (const path of [
      'renewal/sub-1;drop',
      'renewal/sub%20one',
      'renewal/..%2F..%2Fsecrets',
      'Renewal!/sub-1',
    ]) {
      expectErrorEnvelope(await inject('GET', `${base}/${path}`), 422, 'VALIDATION_ERROR', { context: path })
    }
    // a path parameter past the router's bound is refused before any route (the chassis' 414)
    expectErrorEnvelope(await inject('GET', `${base}/renewal/${'k'.repeat(101)}`), 414, 'URI_TOO_LONG')
  })
})

describe('acting', () => {
  it('when an admin retries an awaited step, then 202 with the instance at its next attempt', async () => {
    const key = await begin()
    const answer = await inject('POST', `${base}/renewal/${key}/retry`)
    expect(answer.statusCode).toBe(202)
    expect(answer.json()).toMatchObject({ id: key, step: 'charge', attempt: 2 })
    expect((answer.json() as ProcessInstance).log?.at(-1)).toMatchObject({ outcome: 'operator', attempt: 2 })
  })

  it('when an admin compensates with a reason, then 202 and the reason is in the instance and its log', async () => {
    const key = await begin()
    const answer = await inject('POST', `${base}/renewal/${key}/compensate`, asAdmin(), {
      reason: 'duplicate',
    })
    expect(answer.statusCode).toBe(202)
    expect(answer.json()).toMatchObject({ id: key, state: 'cancelled', step: null })
    expect((answer.json() as ProcessInstance).log?.at(-1)).toMatchObject({
      outcome: 'operator',
      detail: 'duplicate',
    })
  })

  it("when the instance's state refuses the action, then 409 and nothing changes", async () => {
    const key = await renewed()
    const before = await stateOf(key)
    const retry = expectErrorEnvelope(await inject('POST', `${base}/renewal/${key}/retry`), 409, 'CONFLICT')
    expect(retry.message).toBe('the renewal waits for no step (renewed)')
    const compensate = expectErrorEnvelope(
      await inject('POST', `${base}/renewal/${key}/compensate`, asAdmin(), {}),
      409,
      'CONFLICT',
    )
    expect(compensate.message).toBe('the renewal is renewed: there is nothing to compensate')
    expect(await stateOf(key)).toEqual(before)
  })

  it('when a compensate body is malformed, then 422 and nothing changes', async () => {
    const key = await begin()
    const before = await stateOf(key)
    for (const body of [{ reason: '' }, { reason: 'r'.repeat(301) }, { reason: 7 }, { why: 'extra' }]) {
      expectErrorEnvelope(
        await inject('POST', `${base}/renewal/${key}/compensate`, asAdmin(), body),
        422,
        'VALIDATION_ERROR',
        { context: JSON.stringify(body) },
      )
    }
    expect(await stateOf(key)).toEqual(before)
  })
})

describe('the clock', () => {
  it('when a step goes unanswered past its last attempt, then the clock escalates it: counted, logged, shown with its reason', async () => {
    const key = await begin()
    const counted = async () => {
      const metric = await built.app.metrics.registry
        .getSingleMetric('meridian_process_escalations_total')
        ?.get()
      return (
        metric?.values.find((value) => value.labels.type === 'renewal' && value.labels.step === 'charge')
          ?.value ?? 0
      )
    }
    const countedBefore = await counted()
    // each attempt's deadline made to pass in turn; the app's own clock (every 50 ms) fires it
    for (let attempt = 1; attempt <= 3; attempt++) {
      await built.sql`
        update process_instances set deadline = now() - interval '1 second'
        where type = ${renewalType} and key = ${key} and attempt = ${attempt} and deadline is not null`
      await eventually(`attempt ${attempt} timed out`, async () => {
        const [row] = await built.sql<{ fired: boolean }[]>`
          select (attempt > ${attempt} or escalation is not null) as fired
          from process_instances where type = ${renewalType} and key = ${key}`
        return row?.fired === true
      })
    }
    const answer = await inject('GET', `${base}/renewal/${key}`)
    expect(answer.json()).toMatchObject({
      attempt: 3,
      deadline: null,
      escalated: true,
      escalation: 'the charge step did not answer after 3 attempts',
    })
    expect(await counted()).toBe(countedBefore + 1)
    expect(built.logs).toContainEqual(
      expect.objectContaining({
        alert: 'process-escalated',
        processType: 'renewal',
        processKey: key,
        step: 'charge',
      }),
    )
    const listed = await inject('GET', `${base}?escalated=true&type=renewal`)
    expect((listed.json() as { data: ProcessInstance[] }).data.map((each) => each.id)).toContain(key)
  })
})
