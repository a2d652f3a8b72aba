// The token and signing-key settings of auth's configuration: defaults, ranges, and the rules that span variables.
import { ConfigError } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import { loadAuthConfig } from '../src/config.ts'

// the public development defaults are accepted under test (production's refusals: production-config.test.ts)
const inTest = { NODE_ENV: 'test' }

describe('auth configuration: tokens and keys', () => {
  it('when nothing is set, then access tokens live 15 minutes, refresh tokens 14 days, sessions 8 hours, keys rotate every 30 days', () => {
    const config = loadAuthConfig(inTest)
    expect(config).toMatchObject({
      ACCESS_TOKEN_TTL_SECONDS: 900,
      REFRESH_TOKEN_TTL_SECONDS: 14 * 24 * 3600,
      SESSION_TTL_SECONDS: 8 * 3600,
      SIGNING_KEY_ROTATION_SECONDS: 30 * 24 * 3600,
      JWKS_MAX_AGE_SECONDS: 300,
      LOGIN_MAX_FAILURES_PER_ADDRESS: 20,
      LOGIN_MAX_FAILURES_PER_ACCOUNT: 5,
      LOGIN_FAILURE_WINDOW_SECONDS: 900,
      REVOCATION_DELIVERY_INTERVAL_MS: 1000,
      // the gateway's public address in development: the issuer of every token and of the OpenID provider
      JWT_ISSUER: 'http://127.0.0.1:8080',
    })
  })

  it('when JWT_ISSUER is not an http(s) origin (a path, a trailing slash, a query, credentials, another scheme), then it is refused naming it', () => {
    for (const issuer of [
      'https://api.example.com/auth',
      'https://api.example.com/',
      'https://api.example.com?x=1',
      'https://user:pw@api.example.com',
      'ftp://api.example.com',
      'api.example.com',
    ]) {
      expect(() => loadAuthConfig({ NODE_ENV: 'test', JWT_ISSUER: issuer }), issuer).toThrow(
        /JWT_ISSUER: must/,
      )
    }
    expect(loadAuthConfig({ NODE_ENV: 'test', JWT_ISSUER: 'https://api.example.com:8443' }).JWT_ISSUER).toBe(
      'https://api.example.com:8443',
    )
  })

  it('when the access-token lifetime is outside 15 to 60 minutes, then the configuration is refused', () => {
    expect(() => loadAuthConfig({ ...inTest, ACCESS_TOKEN_TTL_SECONDS: '600' })).toThrow(ConfigError)
    expect(() => loadAuthConfig({ ...inTest, ACCESS_TOKEN_TTL_SECONDS: '3601' })).toThrow(
      /ACCESS_TOKEN_TTL_SECONDS/,
    )
  })

  it('when HS256 is chosen without a secret, then it is refused naming the variable', () => {
    expect(() => loadAuthConfig({ ...inTest, JWT_ALGORITHM: 'HS256' })).toThrow(/JWT_SECRET: required/)
  })
})
