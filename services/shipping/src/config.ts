// The shipping service's environment: its own stores, and the API keys of the carriers that report deliveries.
import {
  carrierKeysIn,
  carrierKeysVariable,
  loadConfig,
  ownStoresEnv,
  serviceEnv,
} from '@meridian/service-kit'
import type { Static } from 'typebox'

export const ShippingEnv = serviceEnv({
  ...ownStoresEnv({ port: 3005, database: 'shipping' }),
  SHIPPING_CARRIER_KEYS: carrierKeysVariable('report deliveries'),
})
export type ShippingConfig = Static<typeof ShippingEnv>

export const loadShippingConfig = (env: NodeJS.ProcessEnv = process.env): ShippingConfig =>
  loadConfig(ShippingEnv, env)

/** The carriers' keys of the configuration, each once, without the separators' white space. */
export const carrierKeysOf = (config: Pick<ShippingConfig, 'SHIPPING_CARRIER_KEYS'>): string[] =>
  carrierKeysIn(config.SHIPPING_CARRIER_KEYS)
