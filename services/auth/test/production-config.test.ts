// Auth started as production (NODE_ENV unset or production): every public development default is refused by name,
// and real values start it (the addresses of the password reset and address verification pages among them).
import { ConfigError } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import { loadAuthConfig } from '../src/config.ts'

/** What a deployment sets instead of each development default (none of them public). */
const production = {
  DATABASE_URL: 'postgres://auth:a-real-password@db.internal:5432/auth',
  SERVICE_CREDENTIAL: 'a-real-service-credential-of-the-deployment-0001',
  SIGNING_KEY_ENCRYPTION_SECRET: 'a-real-production-secret-of-enough-length',
  OIDC_COOKIE_KEYS: 'a-real-production-cookie-key-of-enough-length',
  OIDC_WEB_CLIENT_SECRET: 'a-real-production-web-client-secret-long',
  OIDC_MACHINE_CLIENT_SECRET: 'a-real-production-machine-secret-long-xx',
  OIDC_SPA_REDIRECT_URIS: 'https://console.example.com/console/',
  OIDC_WEB_REDIRECT_URIS: 'https://shop.example.com/callback',
  // where a password reset mail's link leads (the console's page): a development default would mail links to localhost
  PASSWORD_RESET_URL: 'https://shop.example.com/console/#/reset-password',
  // and where an address verification mail's link leads
  EMAIL_VERIFICATION_URL: 'https://shop.example.com/console/#/verify-email',
}
const developmentDefaults = Object.keys(production)
// these tests are about the development defaults: the engines' transport is not what is refused (this test's addresses
// are plaintext; packages/service-kit's config test has production's refusal of them)
const plaintextAllowed = { ENGINES_PLAINTEXT_ALLOWED: 'true' }

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadAuthConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }
  throw new Error('the configuration was accepted')
}

const named = (name: string) => `${name}: must be set in production (its default is for development only)`

describe('auth in production', () => {
  it('when nothing is set, then auth is production and refuses to start, naming every development default and showing none', () => {
    const message = refusal({})
    for (const name of developmentDefaults) expect(message).toContain(named(name))
    // and the engines it would reach in plaintext, at their development addresses
    expect(message).toContain('REDIS_URL: redis:// is plaintext')
    expect(message).not.toMatch(/insecure-development|postgres:postgres|localhost/)
  })

  it('when one development default is left (unset, or set to the public value), then that one alone is named', () => {
    const defaults = loadAuthConfig({ NODE_ENV: 'test' }) as unknown as Record<string, unknown>
    for (const name of developmentDefaults) {
      const { [name]: _left, ...rest } = production as Record<string, string>
      for (const env of [rest, { ...rest, [name]: String(defaults[name]) }]) {
        expect(refusal({ ...env, ...plaintextAllowed, NODE_ENV: 'production' }), name).toBe(
          `invalid configuration:\n  - ${named(name)}`,
        )
      }
    }
  })

  it('when a development cookie key is kept beside a real one, then it is still refused', () => {
    const keys = `${production.OIDC_COOKIE_KEYS},insecure-development-oidc-cookie-key-0001`
    expect(refusal({ ...production, ...plaintextAllowed, OIDC_COOKIE_KEYS: keys })).toBe(
      `invalid configuration:\n  - ${named('OIDC_COOKIE_KEYS')}`,
    )
  })

  it('when every one is given a real value, then auth starts as production (NODE_ENV unset)', () => {
    expect(loadAuthConfig({ ...production, ...plaintextAllowed })).toMatchObject({
      NODE_ENV: 'production',
      ...production,
    })
  })
})
