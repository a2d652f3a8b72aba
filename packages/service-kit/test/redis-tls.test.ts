// Redis over TLS from the configuration (REDIS_URL rediss://, REDIS_TLS_CA / _CERT / _KEY): what createRedis is given,
// and every way the variables can be wrong. No engine: secure-redis-access.test.ts connects.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, ServiceEnv } from '../src/config.ts'
import { createRedis, redisTlsOptions } from '../src/redis.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-redis-tls-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const certificate = join(dir, 'ca.pem')
const key = join(dir, 'key.pem')
const notPem = join(dir, 'notes.txt')
writeFileSync(certificate, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n')
writeFileSync(notPem, 'not a certificate\n')

/** The problems of the ConfigError `run` throws. */
function problemsOf(run: () => unknown): string[] {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  throw new Error('no ConfigError was thrown')
}

describe('Redis TLS from the configuration', () => {
  it('when REDIS_URL is rediss://, then TLS is on: the CA and client certificate read, the host as the server name', () => {
    expect(
      redisTlsOptions('rediss://order:secret@redis.example:6380', {
        REDIS_TLS_CA: certificate,
        REDIS_TLS_CERT: certificate,
        REDIS_TLS_KEY: key,
      }),
    ).toEqual({
      servername: 'redis.example',
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
      cert: expect.stringContaining('BEGIN CERTIFICATE'),
      key: expect.stringContaining('BEGIN PRIVATE KEY'),
    })
    // the system's CAs without REDIS_TLS_CA; an address is no server name (RFC 6066)
    expect(redisTlsOptions('rediss://order:secret@127.0.0.1:6380')).toEqual({})
    expect(redisTlsOptions('rediss://[::1]:6380', { REDIS_TLS_CA: certificate })).toEqual({
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
    })
    expect(redisTlsOptions('redis://127.0.0.1:6379', {})).toBeUndefined()
  })

  it('when a TLS file is given for a redis:// URL, then it is refused naming the variable, not silently sent in plaintext', () => {
    expect(
      problemsOf(() =>
        redisTlsOptions('redis://127.0.0.1:6379', { REDIS_TLS_CA: certificate, REDIS_TLS_KEY: key }),
      ),
    ).toEqual([
      'REDIS_TLS_CA: given, but REDIS_URL is not rediss:// (TLS): set REDIS_URL to rediss://…',
      'REDIS_TLS_KEY: given, but REDIS_URL is not rediss:// (TLS): set REDIS_URL to rediss://…',
    ])
  })

  it('when only half a client certificate is given, then the missing half is named', () => {
    expect(problemsOf(() => redisTlsOptions('rediss://h:6380', { REDIS_TLS_CERT: certificate }))).toEqual([
      'REDIS_TLS_KEY: required with REDIS_TLS_CERT (a client certificate and its key)',
    ])
    expect(problemsOf(() => redisTlsOptions('rediss://h:6380', { REDIS_TLS_KEY: key }))).toEqual([
      'REDIS_TLS_CERT: required with REDIS_TLS_KEY (a client certificate and its key)',
    ])
  })

  it('when a file is missing, unreadable as a file, or holds no PEM of its kind, then the variable and path are named', () => {
    const missing = join(dir, 'missing.pem')
    expect(problemsOf(() => redisTlsOptions('rediss://h:6380', { REDIS_TLS_CA: missing }))).toEqual([
      `REDIS_TLS_CA: cannot read '${missing}' (ENOENT)`,
    ])
    expect(problemsOf(() => redisTlsOptions('rediss://h:6380', { REDIS_TLS_CA: dir }))).toEqual([
      `REDIS_TLS_CA: cannot read '${dir}' (EISDIR)`,
    ])
    expect(problemsOf(() => redisTlsOptions('rediss://h:6380', { REDIS_TLS_CA: notPem }))).toEqual([
      `REDIS_TLS_CA: '${notPem}' holds no PEM certificate`,
    ])
    // a certificate where the key belongs, and the other way round
    expect(
      problemsOf(() =>
        redisTlsOptions('rediss://h:6380', { REDIS_TLS_CERT: certificate, REDIS_TLS_KEY: certificate }),
      ),
    ).toEqual([`REDIS_TLS_KEY: '${certificate}' holds no PEM private key`])
    expect(
      problemsOf(() => redisTlsOptions('rediss://h:6380', { REDIS_TLS_CERT: key, REDIS_TLS_KEY: key })),
    ).toEqual([`REDIS_TLS_CERT: '${key}' holds no PEM certificate`])
  })

  it('when createRedis is given a bad TLS file, then it throws the ConfigError before connecting', () => {
    expect(
      problemsOf(() =>
        createRedis('rediss://h:6380', {
          connectionName: 'test',
          tls: { REDIS_TLS_CA: join(dir, 'gone.pem') },
        }),
      ),
    ).toEqual([`REDIS_TLS_CA: cannot read '${join(dir, 'gone.pem')}' (ENOENT)`])
  })

  it('when the variables are read, then overlong paths and URLs are refused, the URL without echoing its password', () => {
    const minimal = { NODE_ENV: 'test', PORT: '3002', DATABASE_URL: 'postgres://u:p@h:5432/orders' }
    const config = loadConfig(ServiceEnv, {
      ...minimal,
      REDIS_URL: 'rediss://order:secret@127.0.0.1:6380',
      REDIS_TLS_CA: certificate,
    })
    expect(config.REDIS_TLS_CA).toBe(certificate)
    expect(config.REDIS_TLS_CERT).toBeUndefined()
    const long = `/${'a'.repeat(4096)}`
    const problems = problemsOf(() =>
      loadConfig(ServiceEnv, {
        ...minimal,
        REDIS_URL: `rediss://order:${'s'.repeat(2048)}@h:6380`,
        REDIS_TLS_CA: long,
        REDIS_TLS_KEY: long,
      }),
    )
    expect(problems.map((problem) => problem.split(':')[0])).toEqual([
      'REDIS_URL',
      'REDIS_TLS_CA',
      'REDIS_TLS_KEY',
    ])
    // the URL holds the user's password
    expect(problems.join('\n')).not.toContain('sss')
  })
})
