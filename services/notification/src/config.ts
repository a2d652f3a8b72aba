// The notification service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const NotificationEnv = serviceEnv(ownStoresEnv({ port: 3006, database: 'notifications' }))
export type NotificationConfig = Static<typeof NotificationEnv>

export const loadNotificationConfig = (env: NodeJS.ProcessEnv = process.env): NotificationConfig =>
  loadConfig(NotificationEnv, env)
