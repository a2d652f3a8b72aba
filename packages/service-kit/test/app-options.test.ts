// What createServiceApp composes from its options: the service's database (readiness and error mapping) and further
// readiness checks, so that no service writes them by hand.
import { AppError, ErrorCode } from '@meridian/contracts'
import { captureLogs, expectErrorEnvelope, uniqueName } from '@meridian/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { createServiceApp, type ServiceApp } from '../src/index.ts'

class StoreError extends Error {}

describe('createServiceApp: database and health checks', () => {
  let app: ServiceApp | undefined
  afterEach(async () => {
    await app?.close()
  })

  async function build(databaseUp: boolean, cacheUp: boolean): Promise<ServiceApp> {
    app = await createServiceApp({
      name: uniqueName('options'),
      version: '1.0.0',
      environment: 'test',
      logLevel: 'info',
      logStream: captureLogs().stream,
      rateLimit: false,
      database: {
        check: async () => {
          if (!databaseUp) throw new Error('connection refused')
        },
        mapError: (error) =>
          error instanceof StoreError
            ? new AppError(409, ErrorCode.CONFLICT, { message: 'taken' })
            : undefined,
      },
      // the database's mapping comes first: this one never sees a StoreError
      errorMappers: [(error) => (error instanceof StoreError ? AppError.notFound() : undefined)],
      healthChecks: {
        cache: async () => {
          if (!cacheUp) throw new Error('no answer')
        },
      },
    })
    app.get('/clash', async () => {
      throw new StoreError('duplicate key')
    })
    await app.ready()
    return app
  }

  it('when the database and the other dependencies answer, then readiness names each ok', async () => {
    const ready = await (await build(true, true)).inject({ method: 'GET', url: '/health/ready' })
    expect(ready.statusCode).toBe(200)
    expect(ready.json().checks).toEqual({ database: 'ok', cache: 'ok' })
  })

  it('when the database is down, then readiness is 503 naming it unavailable while the other check stays ok', async () => {
    const ready = await (await build(false, true)).inject({ method: 'GET', url: '/health/ready' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json().checks).toEqual({ database: 'unavailable', cache: 'ok' })
  })

  it("when a handler throws the database's error, then the database's mapping answers, before any other mapper", async () => {
    const answer = await (await build(true, true)).inject({ method: 'GET', url: '/clash' })
    expect(expectErrorEnvelope(answer, 409, 'CONFLICT').message).toBe('taken')
  })
})
