// The services of the system: every folder of services/ with a package.json and a src/main.ts, found rather than
// listed, so that a new service is started (and fuzzed) by existing. auth comes first (the others verify its tokens),
// the gateway last (it routes to the others).
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

export interface SystemService {
  /** the folder's name, which is the service's name (docs/explanation/architecture.md, "The processes") */
  name: string
  dir: string
  /** the process's entry (docs/explanation/architecture.md: only main.ts listens) */
  entry: string
  /** it keeps data in PostgreSQL (it has migrations): the run gives it a database of its own */
  hasDatabase: boolean
  /** the public entry: started after the others, it finds them in Consul and serves their documents merged */
  isGateway: boolean
}

export const gatewayName = 'gateway'
/** the service that issues credentials (and whose JWKS every other service verifies tokens with) */
export const identityProvider = 'auth'

export function discoverServices(servicesDir: string): SystemService[] {
  if (!existsSync(servicesDir)) return []
  const found = readdirSync(servicesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(servicesDir, entry.name))
    .filter((dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src', 'main.ts')))
    .map(
      (dir): SystemService => ({
        name: dir.slice(servicesDir.length + 1),
        dir,
        entry: join(dir, 'src', 'main.ts'),
        hasDatabase: existsSync(join(dir, 'migrations')),
        isGateway: dir.endsWith(`/${gatewayName}`),
      }),
    )
  const rank = (service: SystemService) => (service.name === identityProvider ? 0 : service.isGateway ? 2 : 1)
  return found.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name))
}
