// A small app on the chassis, used by the chassis tests: one route per behaviour under test.
import { AppError, Text } from '@meridian/contracts'
import { captureLogs, infraEndpoints, uniqueName } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { Type } from 'typebox'
import { createServiceApp, registerVersionedApi, type ServiceApp } from '../src/index.ts'

export interface ChassisApp {
  app: ServiceApp
  logs: Record<string, unknown>[]
  redis: Redis
}

export async function buildChassisApp(
  options: {
    environment?: 'development' | 'test' | 'production'
    rateLimitMax?: number
    rateLimitSyncMs?: number
    name?: string
    trustedProxies?: string
  } = {},
): Promise<ChassisApp> {
  const { stream: logStream, lines: logs } = captureLogs()
  const redis = new Redis(infraEndpoints().redisUrl)
  const app = await createServiceApp({
    name: options.name ?? uniqueName('chassis'),
    version: '1.2.3',
    environment: options.environment ?? 'test',
    logLevel: 'info',
    logStream,
    ...(options.trustedProxies === undefined ? {} : { trustedProxies: options.trustedProxies }),
    rateLimit: {
      redis,
      max: options.rateLimitMax ?? 1000,
      timeWindowMs: 60_000,
      ...(options.rateLimitSyncMs === undefined ? {} : { syncIntervalMs: options.rateLimitSyncMs }),
    },
  })
  app.addHook('onClose', async () => {
    redis.disconnect()
  })

  await registerVersionedApi(
    app,
    async (api) => {
      api.post(
        '/widgets',
        {
          schema: {
            body: Type.Object(
              {
                name: Type.String({ minLength: 1 }),
                email: Type.String({ format: 'email' }),
                age: Type.Integer({ minimum: 18 }),
                password: Type.String({ minLength: 8 }),
              },
              { additionalProperties: false },
            ),
            response: { 201: Type.Object({ name: Type.String() }) },
          },
        },
        async (request, reply) => reply.code(201).send({ name: request.body.name }),
      )
      api.post(
        '/notes',
        {
          schema: {
            body: Type.Object(
              { title: Text({ minLength: 1, maxLength: 100 }), tags: Type.Optional(Type.Array(Text())) },
              { additionalProperties: false },
            ),
            querystring: Type.Object({ q: Type.Optional(Text()) }),
          },
        },
        async (request, reply) => reply.code(201).send({ title: request.body.title }),
      )
      api.get('/widgets/:id', async (request) => ({ id: (request.params as { id: string }).id }))
      // a route that finds nothing for some of its paths, as a static file server does
      api.get('/files/*', (request, reply) => {
        if ((request.params as { '*': string })['*'] === 'present.txt') return reply.send('here')
        return reply.callNotFound()
      })
      api.get('/boom', async () => {
        throw new Error('secret internal detail: connection string postgres://u:p@db')
      })
      api.get('/reject', () => Promise.reject(new TypeError('async rejection with internals')))
      api.get('/conflict', async () => {
        throw AppError.conflict()
      })
      api.get('/precondition', async () => {
        throw AppError.preconditionFailed()
      })
      api.get('/unavailable', async () => {
        throw AppError.serviceUnavailable('Payments are down', 30)
      })
      api.get('/late-error', async (_request, reply) => {
        reply.raw.writeHead(200, { 'content-type': 'text/plain' })
        reply.raw.write('partial')
        throw new Error('failed after headers were sent')
      })
    },
    {},
  )
  await app.ready()
  return { app, logs, redis }
}
