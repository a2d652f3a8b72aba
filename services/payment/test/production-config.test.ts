// Payment started as production: the payment-provider simulator, the development default, is refused as its
// provider, and a real provider starts it.
import { ConfigError } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import { loadPaymentConfig } from '../src/config.ts'

const production = {
  DATABASE_URL: 'postgres://payment:a-real-password@db.internal:5432/payments',
  SERVICE_CREDENTIAL: 'a-real-service-credential-of-the-deployment-0001',
  IDEMPOTENCY_SECRET: 'a-real-idempotency-secret-of-the-deployment-01',
}

describe('payment in production', () => {
  it('when PAYMENT_PROVIDER_URL is left to the simulator (unset or set to it), then the start is refused naming it', () => {
    for (const env of [production, { ...production, PAYMENT_PROVIDER_URL: 'http://127.0.0.1:3099' }]) {
      expect(() => loadPaymentConfig(env)).toThrow(ConfigError)
      expect(() => loadPaymentConfig(env)).toThrow(
        /PAYMENT_PROVIDER_URL: must be set in production \(its default is for development only\)/,
      )
    }
  })

  it('when IDEMPOTENCY_SECRET is left to its public default (unset or set to it), then the start is refused naming it', () => {
    const real = { ...production, PAYMENT_PROVIDER_URL: 'https://payments.example.com' }
    const { IDEMPOTENCY_SECRET: _, ...withoutSecret } = real
    for (const env of [
      withoutSecret,
      { ...real, IDEMPOTENCY_SECRET: 'insecure-development-idempotency-secret-0001' },
    ]) {
      expect(() => loadPaymentConfig(env)).toThrow(
        /IDEMPOTENCY_SECRET: must be set in production \(its default is for development only\)/,
      )
    }
    expect(() => loadPaymentConfig({ ...real, IDEMPOTENCY_SECRET: 'short' })).toThrow(
      /IDEMPOTENCY_SECRET: must be one to four/,
    )
  })

  it('when the provider is a real one, then payment starts as production; under test the simulator is accepted', () => {
    const real = { ...production, PAYMENT_PROVIDER_URL: 'https://payments.example.com' }
    expect(loadPaymentConfig(real)).toMatchObject({ NODE_ENV: 'production', ...real })
    expect(loadPaymentConfig({ NODE_ENV: 'test' }).PAYMENT_PROVIDER_URL).toBe('http://127.0.0.1:3099')
  })
})
