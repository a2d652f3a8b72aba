// gateway's main: its configuration, Redis and app (no database), listening once it knows the instances, in
// Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildGatewayService } from './app.ts'
import { loadGatewayConfig } from './config.ts'

serviceMain({
  name: 'gateway',
  loadConfig: loadGatewayConfig,
  database: false,
  buildApp: buildGatewayService,
})
