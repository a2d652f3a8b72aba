// Payment started as production: Stripe's secret key and webhook secret must be the deployment's own (their public
// development defaults are refused), the simulator's address is refused as the provider, and STRIPE_API_BASE unset
// means Stripe itself; under test the simulator is the default provider.
import { ConfigError } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import { loadPaymentConfig, simulatorApiBase } from '../src/config.ts'

const production = {
  DATABASE_URL: 'postgres://payment:a-real-password@db.internal:5432/payments',
  SERVICE_CREDENTIAL: 'a-real-service-credential-of-the-deployment-0001',
  IDEMPOTENCY_SECRET: 'a-real-idempotency-secret-of-the-deployment-01',
  STRIPE_SECRET_KEY: 'sk_live_51AbCdEfGhIjKlMnOpQrStUv',
  STRIPE_WEBHOOK_SECRET: 'whsec_a1b2c3d4e5f6g7h8i9j0',
}

/**
 * payment's loader as a production deployment's environment reaches it: these tests are about its keys and provider,
 * so the engines' transport is not what is refused (this test's addresses are plaintext; packages/service-kit's
 * config test has production's refusal of them).
 */
const loadInProduction = (env: NodeJS.ProcessEnv) =>
  loadPaymentConfig({ ENGINES_PLAINTEXT_ALLOWED: 'true', ...env })

describe('payment in production', () => {
  it('when the Stripe secret key or webhook secret is left to its development default (unset or set to it), then the start is refused naming it', () => {
    for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const) {
      const { [name]: _, ...without } = production
      const development = name === 'STRIPE_SECRET_KEY' ? 'sk_test_meridian' : 'whsec_meridian_development'
      for (const env of [without, { ...production, [name]: development }]) {
        expect(() => loadInProduction(env)).toThrow(ConfigError)
        expect(() => loadInProduction(env)).toThrow(
          new RegExp(`${name}: must be set in production \\(its default is for development only\\)`),
        )
      }
    }
  })

  it('when a key has the wrong shape, then the start is refused saying what is expected, never showing the value', () => {
    const refused = () => loadInProduction({ ...production, STRIPE_SECRET_KEY: 'pk_live_not-a-secret-key' })
    expect(refused).toThrow(/STRIPE_SECRET_KEY: must be a Stripe secret or restricted key/)
    expect(refused).not.toThrow(/pk_live/)
    expect(() => loadInProduction({ ...production, STRIPE_WEBHOOK_SECRET: 'secret' })).toThrow(
      /STRIPE_WEBHOOK_SECRET: must be a webhook signing secret/,
    )
  })

  it("when STRIPE_API_BASE is the simulator's address, then the start is refused; unset, the provider is Stripe itself", () => {
    for (const address of [simulatorApiBase, `${simulatorApiBase}/`]) {
      expect(() => loadInProduction({ ...production, STRIPE_API_BASE: address })).toThrow(
        /STRIPE_API_BASE: must not be the simulator's address in production/,
      )
    }
    const config = loadInProduction(production)
    expect(config).toMatchObject({ NODE_ENV: 'production', ...production })
    expect(config.STRIPE_API_BASE).toBeUndefined()
  })

  it('when IDEMPOTENCY_SECRET is left to its public default (unset or set to it), then the start is refused naming it', () => {
    const { IDEMPOTENCY_SECRET: _, ...withoutSecret } = production
    for (const env of [
      withoutSecret,
      { ...production, IDEMPOTENCY_SECRET: 'insecure-development-idempotency-secret-0001' },
    ]) {
      expect(() => loadInProduction(env)).toThrow(
        /IDEMPOTENCY_SECRET: must be set in production \(its default is for development only\)/,
      )
    }
    expect(() => loadInProduction({ ...production, IDEMPOTENCY_SECRET: 'short' })).toThrow(
      /IDEMPOTENCY_SECRET: must be one to four/,
    )
  })

  it('when payment runs under test, then the simulator is its provider, with the development key and secret', () => {
    expect(loadPaymentConfig({ NODE_ENV: 'test' })).toMatchObject({
      STRIPE_API_BASE: simulatorApiBase,
      STRIPE_SECRET_KEY: 'sk_test_meridian',
      STRIPE_WEBHOOK_SECRET: 'whsec_meridian_development',
    })
  })
})
