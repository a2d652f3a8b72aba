// The order service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const OrderEnv = serviceEnv({
  ...ownStoresEnv({ port: 3002, database: 'orders' }),
  /** the Consul name of the catalogue that prices orders (tests point it at a stand-in of their own) */
  INVENTORY_SERVICE_NAME: Type.String({ minLength: 1, default: 'inventory' }),
  /** how long a request waits for the first list of inventory instances from Consul, ms */
  INVENTORY_DISCOVERY_WAIT_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 3000 }),
})
export type OrderConfig = Static<typeof OrderEnv>

export const loadOrderConfig = (env: NodeJS.ProcessEnv = process.env): OrderConfig =>
  loadConfig(OrderEnv, env)
