// The shipping service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadShippingConfig } from '../src/config.ts'
import { migrateShippingDatabase } from '../src/migrations.ts'
import { buildShippingTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'shipping',
  build: buildShippingTestApp,
  migrate: migrateShippingDatabase,
  loadConfig: loadShippingConfig,
  startService,
})
