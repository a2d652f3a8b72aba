// Vitest global setup: obtains real infrastructure in docs/architecture.md's order — endpoints given in the environment, else a
// Docker engine that answers (containers started with testcontainers, stopped again at the end), else native engines
// through the same code as `scripts/infra up` — says in one line which path ran, then hands the endpoints to every
// test file (inject('infra')) and to child processes (environment).
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
import type { TestProject } from 'vitest/node'
import { type StartedContainers, startContainers } from './containers.ts'
import { chooseInfraPath, describeInfraPath, type PathChoice, probeDocker } from './infra-path.ts'

import './provided-context.ts'

async function dockerInfra(
  choice: PathChoice,
  env: NodeJS.ProcessEnv,
  progress: Progress,
): Promise<{ endpoints: Endpoints; containers: StartedContainers }> {
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
    return { endpoints, containers }
  } catch (error) {
    await containers.stop()
    throw error
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = process.env
  const progress: Progress = (message) => {
    if (env.MERIDIAN_TEST_VERBOSE) process.stderr.write(`[infra] ${message}\n`)
  }
  let endpoints: Endpoints
  let teardown = async () => {}
  try {
    const choice = await chooseInfraPath(env, () => probeDocker(env))
    if (choice.path === 'docker') {
      const docker = await dockerInfra(choice, env, progress)
      endpoints = docker.endpoints
      teardown = docker.containers.stop
      process.stderr.write(`${describeInfraPath(choice, docker.containers.summary)}\n`)
    } else {
      // native (or nothing to start): the Docker question is settled, so infra must not ask it again
      endpoints = await ensureInfra({ env: { ...env, MERIDIAN_INFRA: 'native' }, progress })
      process.stderr.write(`${describeInfraPath(choice)}\n`)
    }
  } catch (error) {
    throw new Error(
      `These tests need real PostgreSQL, Kafka, Consul and Redis and could not get them:\n` +
        `  ${(error instanceof Error ? error.message : String(error)).replaceAll('\n', '\n  ')}\n` +
        `Run ./scripts/infra up (or set DATABASE_URL, KAFKA_BROKERS, CONSUL_HTTP_ADDR and REDIS_URL) and see docs/development.md.`,
    )
  }
  project.provide('infra', endpoints)
  process.env.DATABASE_URL = endpoints.databaseUrl
  process.env.KAFKA_BROKERS = endpoints.kafkaBrokers
  process.env.CONSUL_HTTP_ADDR = endpoints.consulHttpAddr
  process.env.REDIS_URL = endpoints.redisUrl
  return teardown
}
