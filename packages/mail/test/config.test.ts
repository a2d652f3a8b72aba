// Mail's configuration, loaded as a service loads it (service-kit's loadConfig over serviceEnv): defaults in
// development, refused in production; SMTP_URL's TLS modes and ports; credentials only from their own variables.
import { ConfigError, loadConfig, serviceEnv } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import { mailEnv, smtpEndpoint, smtpPoolOptions } from '../src/index.ts'

const Env = serviceEnv({ PORT: serviceEnv({}).properties.PORT, ...mailEnv() })
const base = { PORT: '3006', DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://127.0.0.1:6379' }

describe('mail configuration', () => {
  it('when nothing is set in development, then Mailpit on this machine and the development defaults are used', () => {
    const config = loadConfig(Env, { ...base, NODE_ENV: 'development' })
    expect(config.SMTP_URL).toBe('smtp://127.0.0.1:1025')
    expect(config.MAIL_FROM).toBe('Meridian <no-reply@meridian.test>')
    expect(config.MAIL_SEND_TIMEOUT_MS).toBe(15_000)
    expect(config.SMTP_USERNAME).toBeUndefined()
  })

  it('when production leaves the unsubscribe secret and address at their development defaults, then it refuses to start, naming each', () => {
    const error = (() => {
      try {
        loadConfig(Env, {
          ...base,
          NODE_ENV: 'production',
          SERVICE_CREDENTIAL: 'x'.repeat(40),
          // the engines' transport is not what this test is about (base's addresses are plaintext)
          ENGINES_PLAINTEXT_ALLOWED: 'true',
        })
      } catch (caught) {
        return caught as ConfigError
      }
    })()
    expect(error).toBeInstanceOf(ConfigError)
    const problems = error?.problems.join('\n') ?? ''
    for (const name of ['UNSUBSCRIBE_SECRET', 'UNSUBSCRIBE_URL']) expect(problems).toContain(name)
    // the SMTP server and the From have plain defaults: unset, mails wait and end dead; the service still starts
    for (const name of ['SMTP_URL', 'MAIL_FROM']) expect(problems).not.toContain(name)
  })

  it('when values are bad, then each is named, and a secret or the SMTP address is never echoed', () => {
    const problems = (() => {
      try {
        loadConfig(Env, {
          ...base,
          NODE_ENV: 'development',
          SMTP_URL: 'smtp://user:hunter2-password@mail.example:587',
          MAIL_FROM: 'not a mailbox',
          UNSUBSCRIBE_SECRET: 'short-secret',
        })
      } catch (caught) {
        return (caught as ConfigError).problems
      }
      return []
    })()
    expect(problems.join('\n')).toMatch(/SMTP_URL: must be smtp/)
    expect(problems.join('\n')).toMatch(/MAIL_FROM: must be a mailbox/)
    expect(problems.join('\n')).toMatch(/UNSUBSCRIBE_SECRET: must be one to four/)
    expect(problems.join('\n')).not.toContain('hunter2')
    expect(problems.join('\n')).not.toContain('short-secret')
  })

  it('when MAIL_FROM is a bare address or a named mailbox, then it is accepted', () => {
    for (const from of ['shop@example.com', 'Shop Name <shop@mail.example.com>'])
      expect(loadConfig(Env, { ...base, NODE_ENV: 'development', MAIL_FROM: from }).MAIL_FROM).toBe(from)
    for (const from of ['<shop@example.com', 'a, b <shop@example.com>', 'Shop\r\nBcc: x <shop@example.com>'])
      expect(() => loadConfig(Env, { ...base, NODE_ENV: 'development', MAIL_FROM: from })).toThrow(
        ConfigError,
      )
  })

  it('when SMTP_URL names a TLS mode, then the transport uses it, with the usual port when none is given', () => {
    expect(smtpEndpoint('smtps://mail.example')).toEqual({ host: 'mail.example', port: 465, tls: 'implicit' })
    expect(smtpEndpoint('smtp://mail.example?starttls=required')).toEqual({
      host: 'mail.example',
      port: 587,
      tls: 'starttls-required',
    })
    expect(smtpEndpoint('smtp://127.0.0.1:1025')).toEqual({
      host: '127.0.0.1',
      port: 1025,
      tls: 'starttls-opportunistic',
    })
    expect(smtpEndpoint('smtp://[::1]:2525')).toEqual({
      host: '::1',
      port: 2525,
      tls: 'starttls-opportunistic',
    })
    const options = smtpPoolOptions({
      SMTP_URL: 'smtp://mail.example:587?starttls=required',
      SMTP_USERNAME: 'meridian',
      SMTP_PASSWORD: 'p',
      MAIL_SEND_TIMEOUT_MS: 2000,
      MAIL_POOL_MAX_CONNECTIONS: 4,
    })
    expect(options).toMatchObject({
      pool: true,
      host: 'mail.example',
      port: 587,
      secure: false,
      requireTLS: true,
      auth: { user: 'meridian', pass: 'p' },
      maxConnections: 4,
      socketTimeout: 2000,
      logger: false,
    })
    expect(
      smtpPoolOptions({
        SMTP_URL: 'smtps://mail.example',
        MAIL_SEND_TIMEOUT_MS: 2000,
        MAIL_POOL_MAX_CONNECTIONS: 1,
      }),
    ).toMatchObject({
      secure: true,
      requireTLS: false,
    })
  })
})
