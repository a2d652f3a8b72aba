// The order service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const OrderEnv = serviceEnv(ownStoresEnv({ port: 3002, database: 'orders' }))
export type OrderConfig = Static<typeof OrderEnv>

export const loadOrderConfig = (env: NodeJS.ProcessEnv = process.env): OrderConfig =>
  loadConfig(OrderEnv, env)
