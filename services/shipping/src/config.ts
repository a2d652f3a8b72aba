// The shipping service's environment: its own stores, and the API keys of the carriers that report deliveries.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

/** One key: at least 16 characters, none of them a comma or white space. */
const carrierKey = '[^,\\s]{16,}'

export const ShippingEnv = serviceEnv({
  ...ownStoresEnv({ port: 3005, database: 'shipping' }),
  SHIPPING_CARRIER_KEYS: Type.String({
    default: '',
    pattern: `^\\s*(${carrierKey}\\s*(,\\s*${carrierKey}\\s*)*)?$`,
    description:
      'the API keys carriers send in X-Carrier-Key to report deliveries, comma-separated, each at least 16 characters; empty: no carrier may (only admins deliver)',
  }),
})
export type ShippingConfig = Static<typeof ShippingEnv>

export const loadShippingConfig = (env: NodeJS.ProcessEnv = process.env): ShippingConfig =>
  loadConfig(ShippingEnv, env)

/** The carriers' keys of the configuration, each once, without the separators' white space. */
export const carrierKeysOf = (config: Pick<ShippingConfig, 'SHIPPING_CARRIER_KEYS'>): string[] => [
  ...new Set(
    config.SHIPPING_CARRIER_KEYS.split(',')
      .map((key) => key.trim())
      .filter(Boolean),
  ),
]
