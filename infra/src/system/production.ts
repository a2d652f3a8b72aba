// The production form of a run (MERIDIAN_SYSTEM_BUILD=production): every service from its build (./scripts/build)
// under plain node with NODE_ENV=production, which refuses the public development defaults; the run gives each of
// those variables a value of its own, as a deployment must (docs/how-to/deploying.md, "What production refuses").
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { repoRoot } from '../layout.ts'
import type { SystemForm } from './spawned-service.ts'

/**
 * MERIDIAN_SYSTEM_BUILD: `production` (the builds under plain node), `images` (the images of ./scripts/images, run by
 * podman or Docker), or `development` (the default: the sources under tsx).
 */
export function systemFormFromEnv(env: NodeJS.ProcessEnv = process.env): SystemForm {
  const value = env.MERIDIAN_SYSTEM_BUILD
  if (value === undefined || value === '' || value === 'development') return 'development'
  if (value === 'production' || value === 'images') return value
  throw new Error(`MERIDIAN_SYSTEM_BUILD must be development, production or images (got '${value}')`)
}

/** ./scripts/<script> with these names, its output the caller's; throws when it fails. */
function runScript(script: 'build' | 'images', names: string[]): void {
  const result = spawnSync(join(repoRoot, 'scripts', script), names, {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  if (result.error) throw new Error(`./scripts/${script}: ${result.error.message}`)
  if (result.status !== 0)
    throw new Error(`./scripts/${script} ${names.join(' ')} failed (exit ${result.status ?? result.signal})`)
}

/** ./scripts/images of the named services: each image built from the tree as it is (the unchanged layers cached). */
export const buildImages = (names: string[]): void => runScript('images', names)

/** ./scripts/build of the named services: quick when each is already built from the same inputs. */
export const buildServices = (names: string[]): void => runScript('build', names)

const secret = () => randomBytes(32).toString('base64url')

/**
 * What a production run sets beside the system's settings: NODE_ENV; the engines reached in plaintext allowed (a run's
 * engines are the development ones, on this machine's loopback or a cluster's own bridge: production refuses them
 * otherwise); the run's own secrets for auth's key encryption, cookies and OpenID clients, for order's and payment's
 * request fingerprints and notification's unsubscribe links; payment's keys at the provider (the simulator, which
 * takes any test key); the clients' addresses (and the pages of mailed links) on the run's gateway; and the gateway's
 * own copy of the console.
 */
export function productionSettings(gatewayUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    // the run's engines are the development ones, plaintext on this machine's loopback (or the cluster's own bridge)
    ENGINES_PLAINTEXT_ALLOWED: 'true',
    SIGNING_KEY_ENCRYPTION_SECRET: secret(),
    OIDC_COOKIE_KEYS: secret(),
    OIDC_WEB_CLIENT_SECRET: secret(),
    OIDC_MACHINE_CLIENT_SECRET: secret(),
    IDEMPOTENCY_SECRET: secret(),
    UNSUBSCRIBE_SECRET: secret(),
    UNSUBSCRIBE_URL: `${gatewayUrl}/api/v1/notifications/unsubscribe`,
    STRIPE_SECRET_KEY: `sk_test_${randomBytes(24).toString('hex')}`,
    STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('hex')}`,
    OIDC_SPA_REDIRECT_URIS: `${gatewayUrl}/console/`,
    OIDC_WEB_REDIRECT_URIS: `${gatewayUrl}/callback`,
    PASSWORD_RESET_URL: `${gatewayUrl}/console/#/reset-password`,
    EMAIL_VERIFICATION_URL: `${gatewayUrl}/console/#/verify-email`,
    // build/gateway/console, from the gateway's working directory
    CONSOLE_DIR: 'console',
  }
}
