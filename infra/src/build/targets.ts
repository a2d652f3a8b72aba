// What ./scripts/build can build: every service of services/ (found, as the system runner finds them) and the
// payment provider's simulator, each with its entries and the workspace package whose production dependencies it needs.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../layout.ts'
import { discoverServices, gatewayName } from '../system/services.ts'

export interface BuildTarget {
  /** the folder under build/: a service's name, or `payment-simulator` */
  name: string
  /** entries by output name (dist/<name>.js), as paths from the repository's root */
  entries: Record<string, string>
  /** the workspace package `pnpm deploy --prod` installs the production dependencies of; none: the bundle is whole */
  workspacePackage?: string
  /**
   * loaded by dist/main.js before the service's own bundle (dist/tracing.bundle.js): the kit's tracing, which must
   * be in place before the modules it instruments load
   */
  preload?: string
  /** the gateway serves the console (apps/console, built by Vite) from build/gateway/console */
  withConsole: boolean
}

export const simulatorName = 'payment-simulator'
/** The kit's tracing preload (packages/service-kit/src/tracing/preload.ts): every service's dist/main.js loads it first. */
export const tracingPreload = 'packages/service-kit/src/tracing/preload.ts'
export const buildDir = join(repoRoot, 'build')

export function buildTargets(): BuildTarget[] {
  const services = discoverServices(join(repoRoot, 'services')).map((service): BuildTarget => {
    const entries: Record<string, string> = { main: `services/${service.name}/src/main.ts` }
    // a service with a database has `dist/migrate.js`: its migrations, then exit (run before a new version starts)
    if (existsSync(join(service.dir, 'src', 'migrate.ts')))
      entries.migrate = `services/${service.name}/src/migrate.ts`
    // auth's `dist/create-admin.js`: the first administrator of a deployment (docs/how-to/deploying.md)
    if (existsSync(join(service.dir, 'src', 'create-admin.ts'))) {
      entries['create-admin'] = `services/${service.name}/src/create-admin.ts`
    }
    return {
      name: service.name,
      entries,
      workspacePackage: `@meridian/${service.name}`,
      preload: tracingPreload,
      withConsole: service.name === gatewayName,
    }
  })
  const simulator: BuildTarget = {
    name: simulatorName,
    entries: { main: 'infra/src/payment-simulator/main.ts' },
    withConsole: false,
  }
  return [...services, simulator].sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * The flags a built service runs with (`node <flags> dist/main.js`; the build's package.json start script, the
 * system runner's production form and an image's command). V8 lets the young generation grow to 64 MB and keeps it
 * when idle: a service then sits at about 185 MB RSS; at 8 MB semi-spaces it sits near 145 MB (docs/how-to/deploying.md,
 * "Production build"). The flag cannot be set from inside the process: V8 sizes its heap at start.
 */
export const productionNodeFlags: readonly string[] = ['--max-semi-space-size=8']
