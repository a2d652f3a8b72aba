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
  notYetServed: [
    '/api/v1/orders',
    '/orders/7f1c1f0e-8a40-4c1e-9f3a-2b1f0c0d9e11',
    '/users/7f1c1f0e-8a40-4c1e-9f3a-2b1f0c0d9e11/orders',
    '/api/orders',
  ],
})
