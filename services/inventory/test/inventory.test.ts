// The inventory service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadInventoryConfig } from '../src/config.ts'
import { migrateInventoryDatabase } from '../src/migrations.ts'
import { buildInventoryTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'inventory',
  build: buildInventoryTestApp,
  migrate: migrateInventoryDatabase,
  loadConfig: loadInventoryConfig,
  startService,
  notYetServed: ['/api/v1/inventory', '/api/inventory'],
})
