// The realtime-gateway service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { describeServiceChassis } from '@meridian/testkit'
import { loadRealtimeGatewayConfig } from '../src/config.ts'
import { migrateRealtimeGatewayDatabase } from '../src/migrations.ts'
import { buildRealtimeGatewayTestApp } from './support/app.ts'

describeServiceChassis({
  service: 'realtime-gateway',
  build: buildRealtimeGatewayTestApp,
  migrate: migrateRealtimeGatewayDatabase,
  loadConfig: loadRealtimeGatewayConfig,
  startService,
})
