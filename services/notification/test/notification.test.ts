// The notification service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadNotificationConfig } from '../src/config.ts'
import { migrateNotificationDatabase } from '../src/migrations.ts'
import { buildNotificationTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'notification',
  build: buildNotificationTestApp,
  migrate: migrateNotificationDatabase,
  loadConfig: loadNotificationConfig,
  startService,
})
