// The payment service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const PaymentEnv = serviceEnv(ownStoresEnv({ port: 3003, database: 'payments' }))
export type PaymentConfig = Static<typeof PaymentEnv>

export const loadPaymentConfig = (env: NodeJS.ProcessEnv = process.env): PaymentConfig =>
  loadConfig(PaymentEnv, env)
