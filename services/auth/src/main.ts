// auth's main: its configuration, migrated database, Redis, signing keys and app (its outbox relayed), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildAuthService, serviceName } from './app.ts'
import { loadAuthConfig } from './config.ts'
import { migrateAuthDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadAuthConfig,
  migrate: migrateAuthDatabase,
  buildApp: buildAuthService,
})
