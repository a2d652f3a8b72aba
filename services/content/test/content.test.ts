// The content service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadContentConfig } from '../src/config.ts'
import { migrateContentDatabase } from '../src/migrations.ts'
import { buildContentTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'content',
  build: buildContentTestApp,
  migrate: migrateContentDatabase,
  loadConfig: loadContentConfig,
  startService,
})
