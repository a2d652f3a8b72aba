// The shipping service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const ShippingEnv = serviceEnv(ownStoresEnv({ port: 3005, database: 'shipping' }))
export type ShippingConfig = Static<typeof ShippingEnv>

export const loadShippingConfig = (env: NodeJS.ProcessEnv = process.env): ShippingConfig =>
  loadConfig(ShippingEnv, env)
