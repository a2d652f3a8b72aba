// The gateway process: its configuration, Redis and app (no database), listening once it knows the instances, in
// Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildGatewayService } from './app.ts'
import { loadGatewayConfig } from './config.ts'

runServiceProcess({
  name: 'gateway',
  loadConfig: loadGatewayConfig,
  database: false,
  buildApp: buildGatewayService,
})
