// ./scripts/test's closing table: the phases it recorded, each with its share of the cores; what the preparation
// obtained; each typecheck program's and each workspace's time; the suites' counts from vitest's reports; the cluster
// campaign's latencies; the machine's speed reference.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  clusterLines,
  coreShare,
  failureLines,
  readPhases,
  readTurboTasks,
  readVitestReports,
  speedReferenceLines,
  suiteName,
  timeTable,
} from '../src/test-run/report.ts'
import { measureReference, readReferences, referenceWork } from '../src/test-run/speed-reference.ts'

describe("./scripts/test's closing table", () => {
  it('when the phases file is read, then each line gives a phase with its seconds, status and busy CPU seconds', () => {
    const phases = readPhases('lint\t4\t0\t6.0\ntests (vitest, every workspace)\t400\t1\t720.0\n')
    expect(phases).toEqual([
      { name: 'lint', seconds: 4, status: 0, busySeconds: 6 },
      { name: 'tests (vitest, every workspace)', seconds: 400, status: 1, busySeconds: 720 },
    ])
    expect(coreShare(phases[1]!, 2)).toBeCloseTo(0.9)
    expect(coreShare({ name: 'instant', seconds: 0, status: 0, busySeconds: 0 }, 2)).toBeUndefined()
  })

  it('when reports lie under .turbo folders, then each is a suite named by its workspace and form, node_modules aside', () => {
    const root = mkdtempSync(join(tmpdir(), 'test-run-'))
    const report = (dir: string, passed: number, failed: number, start: number, ends: number[]) => {
      mkdirSync(join(root, dir), { recursive: true })
      writeFileSync(
        join(root, dir, 'vitest-report.json'),
        JSON.stringify({
          numPassedTests: passed,
          numFailedTests: failed,
          numPendingTests: 1,
          numTodoTests: 0,
          startTime: start,
          testResults: ends.map((endTime) => ({ endTime })),
        }),
      )
    }
    report('services/auth/.turbo', 10, 0, 1000, [5000, 9000])
    report('packages/db/.turbo/containers', 5, 1, 0, [2500])
    report('node_modules/x/.turbo', 99, 99, 0, [1])
    const suites = readVitestReports(root)
    expect(suites).toEqual([
      {
        file: 'packages/db/.turbo/containers/vitest-report.json',
        passed: 5,
        failed: 1,
        skipped: 1,
        seconds: 2.5,
        failures: [],
      },
      {
        file: 'services/auth/.turbo/vitest-report.json',
        passed: 10,
        failed: 0,
        skipped: 1,
        seconds: 8,
        failures: [],
      },
    ])
    expect(suites.map((suite) => suiteName(suite.file))).toEqual([
      'packages/db (containers)',
      'services/auth',
    ])
  })

  it('when tests failed, then each is listed at the end with its file, its name and its error’s first line; a file that failed outside its tests too', () => {
    const root = mkdtempSync(join(tmpdir(), 'test-run-'))
    mkdirSync(join(root, 'services/chat/.turbo'), { recursive: true })
    writeFileSync(
      join(root, 'services/chat/.turbo/vitest-report.json'),
      JSON.stringify({
        numPassedTests: 1,
        numFailedTests: 1,
        numPendingTests: 0,
        numTodoTests: 0,
        startTime: 0,
        testResults: [
          {
            endTime: 1000,
            name: join(root, 'services/chat/test/rooms.test.ts'),
            status: 'failed',
            assertionResults: [
              {
                fullName: 'rooms when a member joins, then it is heard',
                status: 'passed',
                failureMessages: [],
              },
              {
                fullName: 'rooms when a member leaves, then it is heard once',
                status: 'failed',
                failureMessages: [
                  `\u001b[31mAssertionError: expected [] to deeply equal [ 'left' ]\u001b[39m\n    at rooms.test.ts:12:5`,
                ],
              },
            ],
          },
          {
            endTime: 1000,
            name: join(root, 'services/chat/test/setup.test.ts'),
            status: 'failed',
            message: `\nError: Hook timed out in 60000ms ${'x'.repeat(400)}`,
            assertionResults: [],
          },
        ],
      }),
    )
    const suites = readVitestReports(root)
    expect(suites[0]?.failures).toEqual([
      {
        file: 'services/chat/test/rooms.test.ts',
        test: 'rooms when a member leaves, then it is heard once',
        message: "AssertionError: expected [] to deeply equal [ 'left' ]",
      },
      {
        file: 'services/chat/test/setup.test.ts',
        test: '',
        message: `Error: Hook timed out in 60000ms ${'x'.repeat(266)}…`,
      },
    ])
    expect(failureLines(suites)).toEqual([
      'the failed tests (2)',
      '  services/chat/test/rooms.test.ts › rooms when a member leaves, then it is heard once',
      "    AssertionError: expected [] to deeply equal [ 'left' ]",
      '  services/chat/test/setup.test.ts (the file itself)',
      `    Error: Hook timed out in 60000ms ${'x'.repeat(266)}…`,
    ])
    expect(failureLines([])).toEqual([])
  })

  it("when turbo's run summaries are read, then every one that ran the task gives its workspaces' seconds and cache, a workspace in two the newest's", () => {
    const root = mkdtempSync(join(tmpdir(), 'test-run-'))
    mkdirSync(join(root, '.turbo', 'runs'), { recursive: true })
    writeFileSync(
      join(root, '.turbo', 'runs', 'a.json'),
      JSON.stringify({
        tasks: [
          {
            task: 'typecheck',
            package: '@meridian/db',
            cache: { status: 'HIT' },
            execution: { startTime: 0, endTime: 100, exitCode: 0 },
          },
          {
            task: 'typecheck',
            package: '@meridian/auth',
            cache: { status: 'MISS' },
            execution: { startTime: 1000, endTime: 13_500, exitCode: 0 },
          },
        ],
      }),
    )
    expect(readTurboTasks(root, 'typecheck')).toEqual([
      { workspace: '@meridian/db', seconds: 0.1, cached: true, exitCode: 0 },
      { workspace: '@meridian/auth', seconds: 12.5, cached: false, exitCode: 0 },
    ])
    expect(readTurboTasks(root, 'test')).toEqual([])

    // a second run beside the first (./scripts/test's infra suite): its workspaces join; one in both is the newest's
    const second = join(root, '.turbo', 'runs', 'b.json')
    writeFileSync(
      second,
      JSON.stringify({
        tasks: [
          {
            task: 'typecheck',
            package: '@meridian/infra',
            cache: { status: 'MISS' },
            execution: { startTime: 0, endTime: 200_000, exitCode: 1 },
          },
          {
            task: 'typecheck',
            package: '@meridian/db',
            cache: { status: 'MISS' },
            execution: { startTime: 0, endTime: 2000, exitCode: 0 },
          },
        ],
      }),
    )
    utimesSync(second, new Date(), new Date(Date.now() + 60_000))
    expect(readTurboTasks(root, 'typecheck')).toEqual([
      { workspace: '@meridian/auth', seconds: 12.5, cached: false, exitCode: 0 },
      { workspace: '@meridian/infra', seconds: 200, cached: false, exitCode: 1 },
      { workspace: '@meridian/db', seconds: 2, cached: false, exitCode: 0 },
    ])
  })

  it("when the cluster campaign's results are read, then each fault's latencies before, during and after, and when the first order sent after it shipped, are a line", () => {
    const lines = clusterLines(
      JSON.stringify({
        replicas: 1,
        ratePerSecond: 2,
        secure: true,
        results: [
          {
            reconciliation: { fault: 'host-kill' },
            latency: {
              before: { n: 9, p50: 412, p99: 900 },
              during: { n: 20, p50: 15000, p99: 30000 },
              after: { n: 0 },
              firstShippedAfterStartMs: 7340,
            },
          },
          { reconciliation: { fault: 'redis-failover' }, latency: { before: { n: 0 } } },
        ],
      }),
    )
    expect(lines).toEqual([
      '  cluster campaign host-kill (1 instance(s) of each service, 2 orders/s, every engine secure: Kafka SASL_SSL, PostgreSQL and Redis TLS, Consul ACLs and HTTPS): placed → shipped before the fault p50 0.41 s, p99 0.90 s (9); during p50 15.00 s, p99 30.00 s (20); after –; the first order sent after it struck shipped 7.3 s after',
      '  cluster campaign redis-failover (1 instance(s) of each service, 2 orders/s, every engine secure: Kafka SASL_SSL, PostgreSQL and Redis TLS, Consul ACLs and HTTPS): placed → shipped before the fault –; during –; after –; the first order sent after it struck shipped –',
    ])
  })

  it('when the speed reference is measured, then it is the same work each time (one digest), timed by its CPU', () => {
    expect(referenceWork(2)).toBe(referenceWork(2))
    expect(referenceWork(3)).not.toBe(referenceWork(2))
    const time = measureReference(3, 2)
    expect(time.cpuSeconds).toBeGreaterThan(0)
    expect(time.wallSeconds).toBeGreaterThan(0)
  })

  it("when the reference's lines are read, then the table gives both and the run's total in references; without a start, nothing", () => {
    const references = readReferences('start\t0.800\t0.850\nend\t0.900\t1.200\n\ngarbage\n')
    expect([...references.keys()]).toEqual(['start', 'end'])
    expect(speedReferenceLines(references, 1600)).toEqual([
      'speed reference (infra/src/test-run/speed-reference.ts, the same work on every run): 0.80 CPU-s at the start (0.85 s of wall), 0.90 CPU-s at the end (1.20 s of wall); the run took 1882 references (of their mean)',
    ])
    expect(speedReferenceLines(readReferences('start\t0.800\t0.850\n'), 1600)).toEqual([
      'speed reference (infra/src/test-run/speed-reference.ts, the same work on every run): 0.80 CPU-s at the start (0.85 s of wall); the run took 2000 references',
    ])
    expect(speedReferenceLines(readReferences('end\t0.9\t1.2\n'), 1600)).toEqual([])
  })

  it('when the table is made, then a failed phase says so, the preparation lists what it obtained and each typecheck program has its time', () => {
    const lines = timeTable({
      phases: readPhases(
        'preparation (./scripts/prepare)\t300\t0\t500\ntypecheck (tsc, every workspace)\t10\t0\t5\ntests (vitest, every workspace)\t400\t1\t700\n',
      ),
      cores: 2,
      prepare: {
        purposes: ['engines'],
        check: false,
        seconds: 300,
        results: [
          { name: 'consul', title: 'Consul v1.16.3', outcome: 'obtained', seconds: 290, detail: '/c' },
          { name: 'kafka-jars', title: 'the Kafka jars', outcome: 'present', seconds: 0, detail: '/k' },
        ],
      },
      typecheck: [
        { workspace: 'one program: 16 workspaces', seconds: 21, cached: false, exitCode: 0 },
        { workspace: '@meridian/gateway', seconds: 9, cached: false, exitCode: 2 },
      ],
      tests: [{ workspace: '@meridian/auth', seconds: 200, cached: false, exitCode: 1 }],
      reports: [],
      totalSeconds: 710,
    })
    expect(lines[0]).toBe('where the time went (seconds; the share of the 2 cores the machine kept busy)')
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {2}preparation \(\.\/scripts\/prepare\) +300 s {2}83% busy$/),
    )
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}Consul v1\.16\.3 +290 s {2}obtained$/))
    expect(lines).toContainEqual('    1 of 2 prerequisites already present')
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}one program: 16 workspaces +21 s$/))
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}@meridian\/gateway +9 s {2}exit 2$/))
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}tests \(vitest, every workspace\) +400 s {2}88% busy {2}FAILED \(exit 1\)$/,
      ),
    )
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}@meridian\/auth +200 s {2}exit 1$/))
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}total +710 s$/))
  })
})
