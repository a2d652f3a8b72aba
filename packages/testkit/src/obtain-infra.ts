// Real infrastructure for tests, in docs/explanation/architecture.md's order — endpoints given in the environment, else a Docker
// engine that answers (containers started with testcontainers), else native engines through the same code as
// `scripts/infra up` — with the line that says which path ran and what stops what was started. Used by vitest's
// global setup (one suite) and by with-infra.ts (one set of engines for several suites).
import {
  type ComponentPlan,
  components,
  type Endpoints,
  endpointsOf,
  endpointVariable,
  ensureInfra,
  type Progress,
  provision,
} from '@meridian/infra'
import { startContainers } from './containers.ts'
import { chooseInfraPath, describeInfraPath, type PathChoice, probeDocker } from './infra-path.ts'

export interface ObtainedInfra {
  endpoints: Endpoints
  /** which path ran, in one line (`[testkit] infrastructure: …`) */
  line: string
  /** stops what was started here (containers); nothing for the environment's or the native engines */
  teardown(): Promise<void>
}

async function dockerInfra(
  choice: PathChoice,
  env: NodeJS.ProcessEnv,
  progress: Progress,
): Promise<ObtainedInfra> {
  const containers = await startContainers(choice.missing, {
    ...(choice.docker?.host ? { dockerHost: choice.docker.host } : {}),
    progress,
  })
  try {
    const plan = components.map((name): ComponentPlan => {
      const started = containers.endpoints[name]
      return started
        ? { name, mode: 'docker', endpoint: started }
        : { name, mode: 'external', endpoint: env[endpointVariable[name]] ?? '' }
    })
    const endpoints = endpointsOf(plan, env)
    await provision(endpoints, progress)
    return { endpoints, line: describeInfraPath(choice, containers.summary), teardown: containers.stop }
  } catch (error) {
    await containers.stop()
    throw error
  }
}

/** Obtains the engines; a failure says what the tests need and how to give it to them. */
export async function obtainInfra(env: NodeJS.ProcessEnv, progress: Progress): Promise<ObtainedInfra> {
  try {
    const choice = await chooseInfraPath(env, () => probeDocker(env))
    if (choice.path === 'docker') return await dockerInfra(choice, env, progress)
    // native (or nothing to start): the Docker question is settled, so infra must not ask it again
    const endpoints = await ensureInfra({ env: { ...env, MERIDIAN_INFRA: 'native' }, progress })
    return { endpoints, line: describeInfraPath(choice), teardown: async () => {} }
  } catch (error) {
    throw new Error(
      `These tests need real PostgreSQL, Kafka, Consul and Redis and could not get them:\n` +
        `  ${(error instanceof Error ? error.message : String(error)).replaceAll('\n', '\n  ')}\n` +
        `Run ./scripts/infra up (or set DATABASE_URL, KAFKA_BROKERS, CONSUL_HTTP_ADDR and REDIS_URL) and see docs/how-to/development.md.`,
    )
  }
}

/** The endpoints as the environment variables every test file and child process reads. */
export function endpointEnvironment(endpoints: Endpoints): Record<string, string> {
  return {
    DATABASE_URL: endpoints.databaseUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
    REDIS_URL: endpoints.redisUrl,
  }
}
