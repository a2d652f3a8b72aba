// The API fuzzing runner's own decisions, without running it: which services it finds and in what order, how each
// is configured, what schemathesis is asked to do, and how its report is read.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { keyScopesOf } from '../src/api-fuzz/credentials.ts'
import { runSettings, withRedisDatabase } from '../src/api-fuzz/run-settings.ts'
import {
  configFile,
  outputToShow,
  readFuzzReport,
  schemathesisArguments,
} from '../src/api-fuzz/schemathesis.ts'
import { discoverServices } from '../src/api-fuzz/services.ts'
import { exactPaths, fuzzTargets } from '../src/api-fuzz/targets.ts'

function servicesFolder(layout: Record<string, string[]>): string {
  const root = mkdtempSync(join(tmpdir(), 'api-fuzz-services-'))
  for (const [name, files] of Object.entries(layout)) {
    for (const file of files) {
      // a name ending in / is a folder
      mkdirSync(join(root, name, file.endsWith('/') ? file : join(file, '..')), { recursive: true })
      if (!file.endsWith('/')) writeFileSync(join(root, name, file), '')
    }
  }
  return root
}

describe('api fuzzing: the services of a run', () => {
  it('when services/ holds services, then each with a package.json and src/main.ts is found: auth first, the gateway last', () => {
    const root = servicesFolder({
      order: ['package.json', 'src/main.ts', 'migrations/'],
      gateway: ['package.json', 'src/main.ts'],
      auth: ['package.json', 'src/main.ts', 'migrations/'],
      inventory: ['package.json', 'src/main.ts', 'migrations/'],
      'half-written': ['package.json'],
    })
    writeFileSync(join(root, 'README.md'), '')
    const found = discoverServices(root)
    expect(found.map(({ name, hasDatabase, isGateway }) => ({ name, hasDatabase, isGateway }))).toEqual([
      { name: 'auth', hasDatabase: true, isGateway: false },
      { name: 'inventory', hasDatabase: true, isGateway: false },
      { name: 'order', hasDatabase: true, isGateway: false },
      { name: 'gateway', hasDatabase: false, isGateway: true },
    ])
    expect(found[0]?.entry).toBe(join(root, 'auth', 'src', 'main.ts'))
  })

  it('when the repository has no services folder, then there is nothing to fuzz', () => {
    expect(discoverServices(join(tmpdir(), 'no-such-services-folder'))).toEqual([])
  })

  it('when a service is configured for the run, then limits are out of the way, it is not self-registered, and Redis is the run database', () => {
    expect(runSettings).toMatchObject({ CONSUL_REGISTER: 'false', RATE_LIMIT_MAX: '1000000000' })
    expect(withRedisDatabase('redis://127.0.0.1:6379', 15)).toBe('redis://127.0.0.1:6379/15')
    expect(withRedisDatabase('redis://:secret@cache:6380/2', 15)).toBe('redis://:secret@cache:6380/15')
  })
})

describe('api fuzzing: schemathesis', () => {
  it('when a document is fuzzed, then every check runs on a bounded budget with one worker, the settings file and a JSON report', () => {
    const args = schemathesisArguments(
      'http://127.0.0.1:1234/docs/json',
      { maxExamples: 30, timeoutMs: 1000, seed: '42' },
      { reportFile: '/run/report.json', examplesDatabase: '/cache/examples.db' },
    )
    const option = (name: string) => args[args.indexOf(name) + 1]
    expect(args.slice(0, 4)).toEqual(['--config-file', configFile, 'run', 'http://127.0.0.1:1234/docs/json'])
    expect(option('--checks')).toBe('all')
    expect(option('--max-examples')).toBe('30')
    expect(option('--workers')).toBe('1')
    expect(option('--report')).toBe('json')
    expect(option('--report-json-path')).toBe('/run/report.json')
    expect(option('--seed')).toBe('42')
    expect(args).not.toContain('--exclude-checks')
  })

  it("when schemathesis' JSON report is read, then counts and the 128-bit seed come out exactly", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'api-fuzz-report-')), 'report.json')
    writeFileSync(
      file,
      '{"seed": 151190259571406903694493026890788165912, "running_time": 20.9, "exit_code": 1,' +
        ' "operations": {"selected": 21, "tested": 21, "errored": 0}, "phases": {"coverage": {"status": "failure"}},' +
        ' "test_cases": {"generated": 1411, "with_failures": 2, "unique_failures": 1},' +
        ' "failures": [{}], "errors": [], "warnings": {"missing_auth": ["POST /api/auth/refresh"]}}',
    )
    expect(readFuzzReport(file)).toEqual({
      exitCode: 1,
      seed: '151190259571406903694493026890788165912',
      seconds: 20.9,
      operations: { selected: 21, tested: 21, errored: 0 },
      testCases: { generated: 1411, withFailures: 2, uniqueFailures: 1 },
      failures: 1,
      errors: 0,
      phases: { coverage: 'failure' },
      missingAuth: ['POST /api/auth/refresh'],
    })
  })

  it('when a run passed, then only its summary is shown, without the pytest-like closing banner; when it failed, then everything', () => {
    const output =
      'progress\n=== FAILURES ===\nPOST /x\n=================== SUMMARY ===================\n1 passed\n\n' +
      '============================= 3 warnings in 8.64s ==============================\n'
    expect(outputToShow(output, false)).toBe('=================== SUMMARY ===================\n1 passed')
    expect(outputToShow(output, true)).toBe(output)
  })
})

describe('api fuzzing: the targets of a run', () => {
  const services = [
    { name: 'auth', baseUrl: 'http://127.0.0.1:1', isGateway: false },
    { name: 'order', baseUrl: 'http://127.0.0.1:2', isGateway: false },
    { name: 'gateway', baseUrl: 'http://127.0.0.1:3', isGateway: true },
  ]
  const routedPaths = ['/api/v1/users/{id}', '/api/v1/orders', '/.well-known/jwks.json']

  it("when the gateway routes to services, then its own operations get every phase and its routes the coverage phase, both first; each service's document is whole", () => {
    const targets = fuzzTargets({ services, routedPaths })
    expect(targets.map((target) => [target.name, target.service, target.narrowing.length])).toEqual([
      ['gateway', 'gateway', 2],
      ['gateway-routes', 'gateway', 4],
      ['auth', 'auth', 0],
      ['order', 'order', 0],
    ])
    const [own, routes] = targets
    expect(own?.narrowing[0]).toBe('--exclude-path-regex')
    expect(routes?.narrowing).toEqual(['--include-path-regex', own?.narrowing[1], '--phases', 'coverage'])
    // a gateway alone (nothing routed) is one whole run
    expect(fuzzTargets({ services: [services[2]!], routedPaths: [] })).toEqual([
      { name: 'gateway', service: 'gateway', baseUrl: 'http://127.0.0.1:3', narrowing: [] },
    ])
  })

  it('when the routed paths become a regular expression, then it matches each template exactly and nothing longer or shorter', () => {
    const pattern = new RegExp(exactPaths(routedPaths))
    for (const path of routedPaths) expect(pattern.test(path), path).toBe(true)
    for (const path of [
      '/api/v1/users/{id}/orders',
      '/api/v1/orders/{id}',
      '/api/v1/users',
      '/.well-knownXjwks.json',
    ])
      expect(pattern.test(path), path).toBe(false)
  })
})

describe('api fuzzing: the API key of a run', () => {
  const documentWith = (scopes: unknown[]) => ({
    paths: {
      '/api/v1/api-keys': {
        post: {
          requestBody: {
            content: {
              'application/json': { schema: { properties: { scopes: { items: { enum: scopes } } } } },
            },
          },
        },
      },
    },
  })

  it("when auth's document lists the scopes a key can be made with, then the run's key asks for all of them", () => {
    expect(keyScopesOf(documentWith(['users:read', 'orders:write', 'admin:write']))).toEqual([
      'users:read',
      'orders:write',
      'admin:write',
    ])
  })

  it("when auth's document lists none (or not as text), then the run stops rather than fuzz with a key that reaches nothing", () => {
    for (const document of [documentWith([]), documentWith([1]), { paths: {} }]) {
      expect(() => keyScopesOf(document as Parameters<typeof keyScopesOf>[0])).toThrow(
        'names no scope an API key can be made with',
      )
    }
  })
})
