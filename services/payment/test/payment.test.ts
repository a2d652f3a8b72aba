// The payment service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadPaymentConfig } from '../src/config.ts'
import { migratePaymentDatabase } from '../src/migrations.ts'
import { buildPaymentTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'payment',
  build: buildPaymentTestApp,
  migrate: migratePaymentDatabase,
  loadConfig: loadPaymentConfig,
  startService,
  // every public path is served now: POST /payments (GET on it is 405) and GET /payments/:id, bare, /api and /api/v1
  notYetServed: [],
})
