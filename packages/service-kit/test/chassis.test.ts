// The chassis answers every error of the spec's table in the envelope, with the request id, and logs safely.
import { expectErrorEnvelope, infraEndpoints } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chassisOptions, loadConfig, ServiceEnv } from '../src/index.ts'
import { buildChassisApp, type ChassisApp } from './chassis-app.ts'

const json = { 'content-type': 'application/json' }
const validWidget = { name: 'w', email: 'a@b.co', age: 30, password: 'correct horse' }

describe('chassis: errors and request ids', () => {
  let chassis: ChassisApp

  beforeAll(async () => {
    chassis = await buildChassisApp()
  })
  afterAll(async () => {
    await chassis.app.close()
  })

  it('when a request carries a well-formed X-Request-Id, then it is echoed and equals error.requestId', async () => {
    const response = await chassis.app.inject({
      method: 'GET',
      url: '/api/v1/nope',
      headers: { 'x-request-id': 'abc-123' },
    })
    expect(response.headers['x-request-id']).toBe('abc-123')
    expect(expectErrorEnvelope(response, 404, 'NOT_FOUND').requestId).toBe('abc-123')
  })

  it('when the incoming X-Request-Id is malformed (spaces, newline, too long), then a new one is generated', async () => {
    for (const hostile of ['has space', 'line\nbreak'.replace('\n', '%0A'), 'x'.repeat(200)]) {
      const response = await chassis.app.inject({
        method: 'GET',
        url: '/api/v1/nope',
        headers: { 'x-request-id': hostile },
      })
      expect(response.headers['x-request-id']).not.toBe(hostile)
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
      expectErrorEnvelope(response, 404, 'NOT_FOUND')
    }
  })

  it('when a route does not exist, then 404 NOT_FOUND names the method and URL', async () => {
    const response = await chassis.app.inject({ method: 'DELETE', url: '/api/v1/missing/thing?x=1' })
    const error = expectErrorEnvelope(response, 404, 'NOT_FOUND')
    expect(error.message).toBe('Route DELETE /api/v1/missing/thing not found')
  })

  it('when a known path is called with the wrong method, then 405 lists the allowed methods in Allow', async () => {
    const response = await chassis.app.inject({ method: 'DELETE', url: '/api/v1/widgets/42' })
    expectErrorEnvelope(response, 405, 'METHOD_NOT_ALLOWED')
    expect(response.headers.allow).toBe('GET, HEAD')
  })

  it('when a route of the method finds nothing for the path (a file that is not there), then 404, not 405', async () => {
    expect((await chassis.app.inject({ method: 'GET', url: '/api/v1/files/present.txt' })).body).toBe('here')
    expectErrorEnvelope(
      await chassis.app.inject({ method: 'GET', url: '/api/v1/files/absent.txt' }),
      404,
      'NOT_FOUND',
    )
    // another method on that path is still a 405
    expectErrorEnvelope(
      await chassis.app.inject({ method: 'DELETE', url: '/api/v1/files/absent.txt' }),
      405,
      'METHOD_NOT_ALLOWED',
    )
  })

  it('when the JSON body is malformed, then 400 BAD_REQUEST and nothing else happens', async () => {
    const response = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/widgets',
      headers: json,
      payload: '{"name": ',
    })
    const error = expectErrorEnvelope(response, 400, 'BAD_REQUEST')
    expect(error.message).toBe('Malformed JSON in request body')
  })

  it('when the body is not application/json, then 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const response = await chassis.app.inject({
        method: 'POST',
        url: '/api/v1/widgets',
        headers: { 'content-type': type },
        payload: 'name=w',
      })
      expectErrorEnvelope(response, 415, 'UNSUPPORTED_MEDIA_TYPE', { context: type })
    }
  })

  it('when the body is larger than 1 MB, then 413 PAYLOAD_TOO_LARGE', async () => {
    const payload = JSON.stringify({ ...validWidget, name: 'x'.repeat(1024 * 1024) })
    const response = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/widgets',
      headers: json,
      payload,
    })
    expectErrorEnvelope(response, 413, 'PAYLOAD_TOO_LARGE')
  })

  it('when several fields are invalid, then 422 VALIDATION_ERROR lists each with what was received, never a password', async () => {
    const response = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/widgets',
      headers: json,
      payload: { email: 'not-an-email', age: 12, password: 'short', extra: 'x' },
    })
    const details = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details ?? []
    const byField = Object.fromEntries(details.map((d) => [d.field, d]))
    expect(byField.name).toMatchObject({ message: expect.stringContaining('name') })
    expect(byField.email).toMatchObject({ received: 'not-an-email' })
    expect(byField.age).toMatchObject({ received: '12' })
    expect(byField.extra).toMatchObject({ message: 'is not allowed', received: 'x' })
    expect(byField.password).toMatchObject({ field: 'password', message: expect.stringContaining('8') })
    expect(byField.password?.received).toBeUndefined()
  })

  it('when a refused value holds a card, a token or a password at any depth, then it is not echoed, whatever its own field is called', async () => {
    const response = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/widgets',
      headers: json,
      payload: {
        name: 'n',
        email: 'a@example.com',
        age: 30,
        password: 'long-enough-password',
        source: { card: { number: '4242424242424242' } },
        payment: [{ method: { token: 'tok_4242424242424242' } }],
        plain: { colour: 'blue' },
      },
    })
    const details = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details ?? []
    const byField = Object.fromEntries(details.map((d) => [d.field, d]))
    expect(byField.source).toEqual({ field: 'source', message: 'is not allowed' })
    expect(byField.payment).toEqual({ field: 'payment', message: 'is not allowed' })
    expect(byField.plain).toEqual({
      field: 'plain',
      message: 'is not allowed',
      received: '{"colour":"blue"}',
    })
    expect(response.body).not.toContain('4242')
  })

  it('when a handler throws an unexpected error, then 500 INTERNAL_ERROR with the generic message and no internals in production', async () => {
    const production = await buildChassisApp({ environment: 'production' })
    try {
      const response = await production.app.inject({ method: 'GET', url: '/api/v1/boom' })
      // no stack either: the assertion refuses one unless told to expect it
      const error = expectErrorEnvelope(response, 500, 'INTERNAL_ERROR')
      expect(error.message).toBe('An unexpected error occurred')
      expect(response.body).not.toContain('secret internal detail')
      const logged = production.logs.find((line) => line.msg === 'unexpected error')
      expect(logged).toMatchObject({
        level: 50,
        code: 'INTERNAL_ERROR',
        requestId: response.headers['x-request-id'],
      })
      expect(JSON.stringify(logged)).toContain('secret internal detail')
    } finally {
      await production.app.close()
    }
  })

  it('when the configuration is loaded without NODE_ENV, then the chassis is production: a 500 carries no stack', async () => {
    const config = loadConfig(ServiceEnv, {
      PORT: '0',
      DATABASE_URL: 'postgres://inventory:s3cret-pw@db.internal:5432/inventory',
      REDIS_URL: infraEndpoints().redisUrl,
      SERVICE_CREDENTIAL: 'a-real-service-credential-of-the-deployment-0001',
      // the test's Redis is the development engine, plaintext on this machine's loopback
      ENGINES_PLAINTEXT_ALLOWED: 'true',
    })
    const redis = new Redis(config.REDIS_URL, { lazyConnect: true })
    const { environment } = chassisOptions(config, redis)
    redis.disconnect()
    expect(environment).toBe('production')
    const unset = await buildChassisApp({ environment })
    try {
      const response = await unset.app.inject({ method: 'GET', url: '/api/v1/boom' })
      // the assertion refuses a stack unless told to expect one
      expect(expectErrorEnvelope(response, 500, 'INTERNAL_ERROR').message).toBe(
        'An unexpected error occurred',
      )
      expect(response.body).not.toContain('secret internal detail')
    } finally {
      await unset.app.close()
    }
  })

  it('when an unexpected error happens in development, then the 500 body carries the stack (never in test or production)', async () => {
    const development = await buildChassisApp({ environment: 'development' })
    try {
      const response = await development.app.inject({ method: 'GET', url: '/api/v1/boom' })
      const error = expectErrorEnvelope(response, 500, 'INTERNAL_ERROR', { stack: true })
      expect(error.message).toBe('An unexpected error occurred')
      expect(error.stack).toContain('Error')
    } finally {
      await development.app.close()
    }
    // in test, as in production, the envelope carries no stack (the assertion refuses one)
    const inTest = await chassis.app.inject({ method: 'GET', url: '/api/v1/boom' })
    expectErrorEnvelope(inTest, 500, 'INTERNAL_ERROR')
  })

  it('when an async handler rejects, then the rejection reaches the error handler', async () => {
    const response = await chassis.app.inject({ method: 'GET', url: '/api/v1/reject' })
    expectErrorEnvelope(response, 500, 'INTERNAL_ERROR')
  })

  it('when operational errors are raised, then each keeps its status and code (409, 412, 503 with Retry-After)', async () => {
    const conflict = await chassis.app.inject({ method: 'GET', url: '/api/v1/conflict' })
    expectErrorEnvelope(conflict, 409, 'CONFLICT')
    const precondition = await chassis.app.inject({ method: 'GET', url: '/api/v1/precondition' })
    expectErrorEnvelope(precondition, 412, 'PRECONDITION_FAILED')
    const unavailable = await chassis.app.inject({ method: 'GET', url: '/api/v1/unavailable' })
    expect(expectErrorEnvelope(unavailable, 503, 'SERVICE_UNAVAILABLE').retryAfter).toBe(30)
    expect(unavailable.headers['retry-after']).toBe('30')
    const warned = chassis.logs.find((l) => l.code === 'CONFLICT')
    expect(warned).toMatchObject({ level: 40, statusCode: 409 })
  })

  it('when the client asks for application/problem+json, then the error is RFC 7807 problem details', async () => {
    const response = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/widgets',
      headers: { ...json, accept: 'application/problem+json' },
      payload: { ...validWidget, age: 5 },
    })
    expect(response.statusCode).toBe(422)
    expect(response.headers['content-type']).toContain('application/problem+json')
    expect(response.json()).toMatchObject({
      type: '/problems/validation-error',
      title: 'Validation failed',
      status: 422,
      instance: '/api/v1/widgets',
      code: 'VALIDATION_ERROR',
      requestId: response.headers['x-request-id'],
      errors: [expect.objectContaining({ field: 'age' })],
    })
  })

  it('when an error happens after the headers were sent, then no error body is appended: the error is logged and the connection closed', async () => {
    await expect(
      chassis.app.inject({ method: 'GET', url: '/api/v1/late-error', headers: { 'x-request-id': 'late-1' } }),
    ).rejects.toThrow(/destroyed before completion/)
    const logged = chassis.logs.find((l) => JSON.stringify(l).includes('failed after headers were sent'))
    expect(logged).toMatchObject({ level: 50, requestId: 'late-1' })
  })

  it('when /api is used instead of /api/v1, then it answers the same as v1 (alias)', async () => {
    const v1 = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/widgets',
      headers: json,
      payload: validWidget,
    })
    const alias = await chassis.app.inject({
      method: 'POST',
      url: '/api/widgets',
      headers: json,
      payload: validWidget,
    })
    expect(v1.statusCode).toBe(201)
    expect(alias.statusCode).toBe(201)
    expect(alias.json()).toEqual(v1.json())
  })
})

describe('chassis: logging', () => {
  it('when a request carries a bearer token, cookies and a password, then the logs show none of them', async () => {
    const chassis = await buildChassisApp()
    try {
      await chassis.app.inject({
        method: 'POST',
        url: '/api/v1/widgets',
        headers: {
          ...json,
          authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.secret-token-value.sig',
          cookie: 'sid=cookie-secret-value',
          'x-api-key': 'mk_live_api-key-secret',
        },
        payload: { ...validWidget, age: 3, password: 'hunter2-password-value' },
      })
      const text = JSON.stringify(chassis.logs)
      expect(chassis.logs.length).toBeGreaterThan(0)
      for (const secret of [
        'secret-token-value',
        'cookie-secret-value',
        'api-key-secret',
        'hunter2-password-value',
      ]) {
        expect(text).not.toContain(secret)
      }
      const incoming = chassis.logs.find((l) => l.msg === 'incoming request') as {
        req: { headers: Record<string, string> }
      }
      expect(incoming.req.headers.authorization).toBe('[Redacted]')
      const completed = chassis.logs.find((l) => l.msg === 'request completed')
      expect(completed).toMatchObject({ requestId: expect.any(String), res: { statusCode: 422 } })
    } finally {
      await chassis.app.close()
    }
  })
})
