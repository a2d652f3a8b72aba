import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Value } from 'typebox/value'
import { afterAll, describe, expect, it } from 'vitest'
import {
  KafkaSecurityEnv,
  KafkaSecurityError,
  type KafkaSecurityVariables,
  kafkaSecurityFromEnv,
} from '../src/index.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-kafka-security-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// the parser checks what a file holds by its PEM markers; the broker's tests use real certificates
const certificate = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
const privateKey = '-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n'
const file = (name: string, content: string): string => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const caFile = file('ca.pem', certificate)
const certFile = file('client.pem', certificate)
const keyFile = file('client-key.pem', privateKey)

/** The problems the variables are refused with (fails when they are accepted). */
function problemsOf(env: KafkaSecurityVariables): string[] {
  try {
    kafkaSecurityFromEnv(env)
  } catch (error) {
    expect(error).toBeInstanceOf(KafkaSecurityError)
    return (error as KafkaSecurityError).problems
  }
  throw new Error('accepted')
}

describe('a Kafka client’s TLS and SASL from the variables', () => {
  it('when none is set, then the client is plaintext without authentication', () => {
    expect(kafkaSecurityFromEnv({})).toEqual({})
    // an empty variable is unset, as the services' configuration reads it
    expect(kafkaSecurityFromEnv({ KAFKA_TLS: '', KAFKA_SASL_MECHANISM: '' })).toEqual({})
    expect(kafkaSecurityFromEnv({ KAFKA_TLS: 'false' })).toEqual({})
  })

  it('when KAFKA_TLS is true without files, then TLS trusts the system’s CAs', () => {
    expect(kafkaSecurityFromEnv({ KAFKA_TLS: 'true' })).toEqual({ ssl: true })
    // a service's loaded configuration holds the flag as a boolean
    expect(kafkaSecurityFromEnv({ KAFKA_TLS: true })).toEqual({ ssl: true })
  })

  it('when a CA file is given, then TLS is on without KAFKA_TLS and trusts that CA’s text', () => {
    expect(kafkaSecurityFromEnv({ KAFKA_TLS_CA: caFile })).toEqual({ ssl: { ca: certificate } })
  })

  it('when a client certificate and key are given, then the client presents them (mutual TLS)', () => {
    expect(
      kafkaSecurityFromEnv({
        KAFKA_TLS: 'true',
        KAFKA_TLS_CA: caFile,
        KAFKA_TLS_CERT: certFile,
        KAFKA_TLS_KEY: keyFile,
      }),
    ).toEqual({ ssl: { ca: certificate, cert: certificate, key: privateKey } })
  })

  it('when a mechanism, a username and a password are given, then the client authenticates with them', () => {
    const env = {
      KAFKA_TLS_CA: caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'order',
      KAFKA_SASL_PASSWORD: 'a-password',
    }
    expect(kafkaSecurityFromEnv(env)).toEqual({
      ssl: { ca: certificate },
      sasl: { mechanism: 'scram-sha-512', username: 'order', password: 'a-password' },
    })
    // SASL_PLAINTEXT listeners exist: SASL without TLS is accepted
    expect(
      kafkaSecurityFromEnv({
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
      }),
    ).toEqual({ sasl: { mechanism: 'plain', username: 'u', password: 'p' } })
  })

  it('when KAFKA_TLS is neither true nor false, then it is refused, the value cut short', () => {
    expect(problemsOf({ KAFKA_TLS: 'yes' })).toEqual(['KAFKA_TLS: must be true or false (got "yes")'])
    const [problem] = problemsOf({ KAFKA_TLS: 'x'.repeat(10_000) })
    expect(problem?.length).toBeLessThan(100)
  })

  it('when TLS files are given with KAFKA_TLS=false, then the contradiction is refused', () => {
    expect(problemsOf({ KAFKA_TLS: 'false', KAFKA_TLS_CA: caFile })).toEqual([
      'KAFKA_TLS is false but KAFKA_TLS_CA is set',
    ])
    expect(problemsOf({ KAFKA_TLS: false, KAFKA_TLS_CERT: certFile, KAFKA_TLS_KEY: keyFile })).toEqual([
      'KAFKA_TLS is false but KAFKA_TLS_CERT and KAFKA_TLS_KEY are set',
    ])
  })

  it('when a client certificate comes without its key, or a key without its certificate, then it is refused', () => {
    expect(problemsOf({ KAFKA_TLS_CERT: certFile })).toEqual([
      'KAFKA_TLS_CERT is set without KAFKA_TLS_KEY (a client certificate needs its private key)',
    ])
    expect(problemsOf({ KAFKA_TLS_KEY: keyFile })).toEqual([
      'KAFKA_TLS_KEY is set without KAFKA_TLS_CERT (a private key needs its client certificate)',
    ])
  })

  it('when a file cannot be read, then the problem names its variable and its path', () => {
    const missing = join(dir, 'missing.pem')
    expect(problemsOf({ KAFKA_TLS_CA: missing })).toEqual([`KAFKA_TLS_CA: cannot read "${missing}" (ENOENT)`])
    const folder = join(dir, 'a-folder')
    mkdirSync(folder)
    expect(problemsOf({ KAFKA_TLS_CA: folder })).toEqual([`KAFKA_TLS_CA: "${folder}" is not a file`])
    // a device would be read forever
    expect(problemsOf({ KAFKA_TLS_CA: '/dev/zero' })).toEqual(['KAFKA_TLS_CA: "/dev/zero" is not a file'])
    expect(problemsOf({ KAFKA_TLS_CA: 'a\0b' })[0]).toMatch(/^KAFKA_TLS_CA: cannot read "a\\u0000b" \(/)
    expect(problemsOf({ KAFKA_TLS_CA: `/${'a'.repeat(5000)}` })).toEqual([
      'KAFKA_TLS_CA: a path of at most 4096 characters',
    ])
  })

  it('when a file holds no PEM of its kind, then it is refused: a certificate where the key should be, a large file', () => {
    expect(problemsOf({ KAFKA_TLS_CA: file('empty.pem', '') })).toEqual([
      `KAFKA_TLS_CA: "${join(dir, 'empty.pem')}" holds no PEM certificate`,
    ])
    expect(problemsOf({ KAFKA_TLS_CERT: certFile, KAFKA_TLS_KEY: certFile })).toEqual([
      `KAFKA_TLS_KEY: "${certFile}" holds no PEM private key`,
    ])
    const large = file('large.pem', `${certificate}${'x'.repeat(1024 * 1024)}`)
    expect(problemsOf({ KAFKA_TLS_CA: large })).toEqual([
      `KAFKA_TLS_CA: "${large}" is larger than 1048576 bytes: not a PEM certificate`,
    ])
  })

  it('when the mechanism is not one Meridian offers, then it is refused with the ones it does', () => {
    expect(
      problemsOf({ KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }),
    ).toEqual(['KAFKA_SASL_MECHANISM: must be one of scram-sha-512, scram-sha-256, plain (got "gssapi")'])
  })

  it('when a mechanism comes without its username or password, then each missing one is named', () => {
    expect(problemsOf({ KAFKA_SASL_MECHANISM: 'scram-sha-512' })).toEqual([
      'KAFKA_SASL_MECHANISM is scram-sha-512 but KAFKA_SASL_USERNAME is not set',
      'KAFKA_SASL_MECHANISM is scram-sha-512 but KAFKA_SASL_PASSWORD is not set',
    ])
    expect(problemsOf({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' })).toEqual([
      'KAFKA_SASL_MECHANISM is plain but KAFKA_SASL_PASSWORD is not set',
    ])
  })

  it('when credentials come without a mechanism, then they are refused rather than ignored', () => {
    expect(problemsOf({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toEqual([
      'KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD are set without KAFKA_SASL_MECHANISM (one of scram-sha-512, scram-sha-256, plain)',
    ])
  })

  it('when credentials are too long, then they are refused, and no password is ever shown', () => {
    const password = `secret-${'p'.repeat(2000)}`
    const problems = problemsOf({
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'u'.repeat(300),
      KAFKA_SASL_PASSWORD: password,
    })
    expect(problems).toEqual([
      'KAFKA_SASL_USERNAME: at most 256 characters',
      'KAFKA_SASL_PASSWORD: at most 1024 characters',
    ])
    // every problem at once, in one message, and the password in none of them
    let message = ''
    try {
      kafkaSecurityFromEnv({
        KAFKA_TLS: 'maybe',
        KAFKA_TLS_CERT: certFile,
        KAFKA_SASL_MECHANISM: 'nope',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'the-password-itself',
      })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message.split('\n')).toEqual([
      'Kafka client configuration:',
      '  - KAFKA_TLS: must be true or false (got "maybe")',
      '  - KAFKA_TLS_CERT is set without KAFKA_TLS_KEY (a client certificate needs its private key)',
      '  - KAFKA_SASL_MECHANISM: must be one of scram-sha-512, scram-sha-256, plain (got "nope")',
    ])
    expect(message).not.toContain('the-password-itself')
  })

  it('when a service’s schema checks the variables, then it bounds every string and knows the three mechanisms', () => {
    for (const [name, property] of Object.entries(KafkaSecurityEnv.properties)) {
      if ((property as { type?: string }).type === 'string')
        expect((property as { maxLength?: number }).maxLength, name).toBeGreaterThan(0)
    }
    expect(Value.Check(KafkaSecurityEnv, { KAFKA_SASL_MECHANISM: 'scram-sha-256' })).toBe(true)
    expect(Value.Check(KafkaSecurityEnv, { KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512' })).toBe(false)
    expect(Value.Check(KafkaSecurityEnv, { KAFKA_TLS_CA: 'x'.repeat(4097) })).toBe(false)
  })
})
