// A request's logger: its request id on every line it (or a child of it) writes, and on no other logger's lines; the
// URL as logged: a route's secret path segments and secret query parameters' values replaced.
import { Writable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { loggableUrl, loggerOptions, redactSecretPathSegments, requestLogger } from '../src/logging.ts'

function capturedLogger() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
      done()
    },
  })
  const logger = pino(loggerOptions('logging-test', 'info'), stream) as FastifyBaseLogger
  return { logger, lines }
}

describe('request loggers', () => {
  it('when a request logger and a child of it write, then both lines carry the request id', () => {
    const { logger, lines } = capturedLogger()
    const request = requestLogger(logger, { requestId: 'req-42' }, {})
    request.info('first')
    request.child({ upstream: 'auth' }).warn({ attempt: 2 }, 'second')

    expect(lines).toEqual([
      expect.objectContaining({ service: 'logging-test', requestId: 'req-42', msg: 'first' }),
      expect.objectContaining({ requestId: 'req-42', upstream: 'auth', attempt: 2, msg: 'second' }),
    ])
  })

  it('when the app logger writes beside a request logger, then its line has no request id', () => {
    const { logger, lines } = capturedLogger()
    requestLogger(logger, { requestId: 'req-1' }, {}).info('the request')
    logger.info('the app')

    expect(lines[1]).toMatchObject({ msg: 'the app' })
    expect(lines[1]).not.toHaveProperty('requestId')
  })

  it('when two requests log, then each line carries its own request id', () => {
    const { logger, lines } = capturedLogger()
    const first = requestLogger(logger, { requestId: 'a' }, {})
    const second = requestLogger(logger, { requestId: 'b' }, {})
    second.info('from b')
    first.info('from a')

    expect(lines.map((line) => [line.requestId, line.msg])).toEqual([
      ['b', 'from b'],
      ['a', 'from a'],
    ])
  })

  it('when a request logger gets a level of its own, then the app logger keeps its level', () => {
    const { logger, lines } = capturedLogger()
    const quiet = requestLogger(logger, { requestId: 'q' }, { level: 'error' })
    quiet.info('dropped')
    logger.info('kept')

    expect(lines.map((line) => line.msg)).toEqual(['kept'])
  })

  it("when the app logger's level changes after a request logger was made, then the request logger follows it", () => {
    const { logger, lines } = capturedLogger()
    const request = requestLogger(logger, { requestId: 'l' }, {})
    logger.level = 'error'
    request.warn('dropped')
    logger.level = 'debug'
    request.debug('kept')

    expect(lines).toEqual([expect.objectContaining({ requestId: 'l', msg: 'kept' })])
  })

  it('when a request line holds a password, then it is still redacted', () => {
    const { logger, lines } = capturedLogger()
    requestLogger(logger, { requestId: 'r' }, {}).info({ body: { password: 'hunter2' } }, 'login')

    expect(lines[0]).toMatchObject({ requestId: 'r', body: { password: '[Redacted]' } })
    expect(JSON.stringify(lines)).not.toContain('hunter2')
  })
})

describe('the URL as logged', () => {
  it('when a route names a secret path parameter, then that segment reads [redacted] and the others are kept', () => {
    expect(
      redactSecretPathSegments('/api/v1/password-resets/abc_DEF-123', '/api/v1/password-resets/:token', [
        'token',
      ]),
    ).toBe('/api/v1/password-resets/[redacted]')
    expect(redactSecretPathSegments('/a/1/b/s3cr3t?x=1', '/a/:id/b/:token', ['token'])).toBe(
      '/a/1/b/[redacted]?x=1',
    )
    // a parameter whose name only starts like the secret's is not it
    expect(redactSecretPathSegments('/a/1', '/a/:tokenish', ['token'])).toBe('/a/1')
    expect(redactSecretPathSegments('/a/1', '/a/:id', undefined)).toBe('/a/1')
  })

  it('when a secret wildcard ends the pattern, then everything below it reads [redacted], the query kept', () => {
    expect(
      redactSecretPathSegments('/api/v1/password-resets/tok/extra?q=1', '/api/v1/password-resets/*', ['*']),
    ).toBe('/api/v1/password-resets/[redacted]?q=1')
  })

  it('when a request has both, then loggableUrl replaces the segment and the secret query value', () => {
    expect(
      loggableUrl({
        url: '/resets/s3cr3t?token=t0k3n&page=2',
        routeOptions: { url: '/resets/:token', config: { secretPathParameters: ['token'] } },
      }),
    ).toBe('/resets/[redacted]?token=[Redacted]&page=2')
    expect(loggableUrl({ url: '/unrouted/x?code=1' })).toBe('/unrouted/x?code=[Redacted]')
  })
})
