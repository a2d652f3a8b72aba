// Vitest global setup: obtains real infrastructure (obtain-infra.ts: the environment's endpoints, else containers on
// a Docker engine that answers, stopped again at the end, else the native engines), says in one line which path ran,
// then hands the endpoints to every test file (inject('infra')) and to child processes (environment).
import type { Progress } from '@meridian/infra'
import type { TestProject } from 'vitest/node'
import { endpointEnvironment, obtainInfra } from './obtain-infra.ts'

import './provided-context.ts'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const progress: Progress = (message) => {
    if (process.env.MERIDIAN_TEST_VERBOSE) process.stderr.write(`[infra] ${message}\n`)
  }
  const infra = await obtainInfra(process.env, progress)
  process.stderr.write(`${infra.line}\n`)
  project.provide('infra', infra.endpoints)
  Object.assign(process.env, endpointEnvironment(infra.endpoints))
  return infra.teardown
}
