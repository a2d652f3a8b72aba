// Vitest global setup: ensures real infrastructure through the same code as `scripts/infra up`,
// then hands the endpoints to every test file (inject('infra')) and to child processes (environment).
import { type Endpoints, ensureInfra } from '@meridian/infra'
import type { TestProject } from 'vitest/node'

import './provided-context.ts'

export default async function setup(project: TestProject): Promise<void> {
  let endpoints: Endpoints
  try {
    endpoints = await ensureInfra({
      progress: (message) => {
        if (process.env.MERIDIAN_TEST_VERBOSE) process.stderr.write(`[infra] ${message}\n`)
      },
    })
  } catch (error) {
    throw new Error(
      `These tests need real PostgreSQL, Kafka, Consul and Redis and could not get them:\n` +
        `  ${error instanceof Error ? error.message : String(error)}\n` +
        `Run ./scripts/infra up (or set DATABASE_URL, KAFKA_BROKERS, CONSUL_HTTP_ADDR and REDIS_URL) and see README.md.`,
    )
  }
  project.provide('infra', endpoints)
  process.env.DATABASE_URL = endpoints.databaseUrl
  process.env.KAFKA_BROKERS = endpoints.kafkaBrokers
  process.env.CONSUL_HTTP_ADDR = endpoints.consulHttpAddr
  process.env.REDIS_URL = endpoints.redisUrl
}
