// The order service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadOrderConfig } from '../src/config.ts'
import { migrateOrderDatabase } from '../src/migrations.ts'
import { buildOrderTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'order',
  build: buildOrderTestApp,
  migrate: migrateOrderDatabase,
  loadConfig: loadOrderConfig,
  startService,
  // orders (test/orders.test.ts) and the saga's admin paths (test/saga.test.ts) are served
})
