// The inventory service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const InventoryEnv = serviceEnv(ownStoresEnv({ port: 3004, database: 'inventory' }))
export type InventoryConfig = Static<typeof InventoryEnv>

export const loadInventoryConfig = (env: NodeJS.ProcessEnv = process.env): InventoryConfig =>
  loadConfig(InventoryEnv, env)
