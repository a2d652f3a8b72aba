import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, serviceEnv } from '../src/config.ts'

const schema = serviceEnv({ JWT_TTL_MINUTES: Type.Integer({ minimum: 15, maximum: 60, default: 15 }) })
const minimal = {
  PORT: '3001',
  DATABASE_URL: 'postgres://u:p@h:5432/auth',
  REDIS_URL: 'redis://127.0.0.1:6379',
}

describe('loadConfig', () => {
  it('when the environment holds valid values, then they are converted and defaults filled in', () => {
    const config = loadConfig(schema, { ...minimal, CONSUL_REGISTER: 'false', JWT_TTL_MINUTES: '30' })
    expect(config).toMatchObject({
      PORT: 3001,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      CONSUL_REGISTER: false,
      JWT_TTL_MINUTES: 30,
      RATE_LIMIT_MAX: 300,
    })
  })

  it('when variables are missing or bad, then one error names every one of them, without echoing secrets', () => {
    let error: unknown
    try {
      loadConfig(schema, {
        PORT: 'eighty',
        DATABASE_URL: 'mysql://u:secretpw@h/db',
        LOG_LEVEL: 'loud',
        JWT_TTL_MINUTES: '5',
      })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toContain('REDIS_URL: required but not set')
    expect(message).toContain("PORT: must be an integer >= 0 and <= 65535 (got 'eighty')")
    expect(message).toContain('DATABASE_URL')
    expect(message).not.toContain('secretpw')
    expect(message).toContain(
      "LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')",
    )
    expect(message).toContain("JWT_TTL_MINUTES: must be an integer >= 15 and <= 60 (got '5')")
  })
})
