// The image of each engine on the Docker path: the one place its name and version are written in TypeScript.
// docker-compose.yml names the same official images, infra/containers/engines.sh the same local ones;
// test/containers.test.ts fails when they disagree.
import type { ComponentName } from '@meridian/infra'

export const containerImages = {
  postgres: 'postgres:17',
  kafka: 'apache/kafka:3.9.2',
  consul: 'hashicorp/consul:1.16.3',
  redis: 'redis:7',
} as const satisfies Record<ComponentName, string>

/**
 * The same engines as images built on this machine by `scripts/engine-images` from the native path's artifacts, for
 * machines where the official images cannot be pulled; tagged as the official ones are.
 */
export const localEngineImages = {
  postgres: 'localhost/meridian/postgres:17',
  kafka: 'localhost/meridian/kafka:3.9.2',
  consul: 'localhost/meridian/consul:1.16.3',
  redis: 'localhost/meridian/redis:7',
} as const satisfies Record<ComponentName, string>

/** `official`: the images above, pulled where missing; `local`: the ones scripts/engine-images built. */
export type EngineImages = 'official' | 'local'

/** MERIDIAN_ENGINE_IMAGES as the test setup reads it; unset or empty is `official`. */
export function wantedEngineImages(env: NodeJS.ProcessEnv): EngineImages {
  const wanted = env.MERIDIAN_ENGINE_IMAGES || 'official'
  if (wanted === 'official' || wanted === 'local') return wanted
  throw new Error(`MERIDIAN_ENGINE_IMAGES must be official or local (got '${wanted}')`)
}
