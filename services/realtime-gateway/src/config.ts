// The realtime-gateway service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const RealtimeGatewayEnv = serviceEnv(ownStoresEnv({ port: 3007, database: 'realtime' }))
export type RealtimeGatewayConfig = Static<typeof RealtimeGatewayEnv>

export const loadRealtimeGatewayConfig = (env: NodeJS.ProcessEnv = process.env): RealtimeGatewayConfig =>
  loadConfig(RealtimeGatewayEnv, env)
