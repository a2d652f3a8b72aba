// The preparation (./scripts/prepare): steps run once their needs are there, compiles two at a time, a failure named
// with its log and the steps after it skipped, --check only finds; which steps a purpose selects; and what a test meets
// when something was never obtained (the command that provides it, not an install).
import { execFile, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../src/layout.ts'
import { MissingPrerequisite } from '../src/missing-prerequisite.ts'
import { builtGoBinary } from '../src/native/go-build.ts'
import {
  type PrerequisiteStep,
  parsePurposes,
  purposeSets,
  repositoryPrerequisites,
  stepsFor,
} from '../src/prepare/index.ts'
import { infraPrerequisites } from '../src/prepare/infra-prerequisites.ts'
import { runSteps, summaryTable } from '../src/prepare/run.ts'

/** A step that is missing until obtained; records when its obtaining started and ended on `events`. */
function fakeStep(
  name: string,
  events: string[],
  options: { needs?: string[]; heavy?: boolean; fails?: boolean; present?: boolean } = {},
): PrerequisiteStep & { obtained: boolean } {
  const step = {
    name,
    title: `the ${name}`,
    purposes: ['engines'] as const,
    ...(options.needs ? { needs: options.needs } : {}),
    ...(options.heavy ? { heavy: true } : {}),
    obtained: false,
    async present() {
      return options.present || step.obtained ? `${name} here` : undefined
    },
    async obtain() {
      events.push(`${name} start`)
      // the event loop turns: steps that may run alongside this one start meanwhile
      await sleep(20)
      events.push(`${name} end`)
      if (options.fails) throw new Error(`${name} broke`)
      step.obtained = true
      return `${name} obtained`
    },
  }
  return step
}

const logDir = () => mkdtempSync(join(tmpdir(), 'prepare-test-'))
const quiet = { say: () => {}, heartbeatMs: 60_000 }

describe('running the steps', () => {
  it('when a step needs another, then it starts only after that one is obtained, and independent ones run together', async () => {
    const events: string[] = []
    const results = await runSteps(
      [
        fakeStep('images', events, { needs: ['debian'] }),
        fakeStep('debian', events),
        fakeStep('jars', events),
      ],
      { ...quiet, check: false, logDir: logDir() },
    )
    expect(results.map((r) => [r.name, r.outcome])).toEqual([
      ['images', 'obtained'],
      ['debian', 'obtained'],
      ['jars', 'obtained'],
    ])
    expect(events.indexOf('images start')).toBeGreaterThan(events.indexOf('debian end'))
    // debian and jars were obtained side by side
    expect(events.indexOf('jars start')).toBeLessThan(events.indexOf('debian end'))
  })

  it('when six compiles are missing, then at most four run at once', async () => {
    const events: string[] = []
    await runSteps(
      ['consul', 'jaeger', 'helm', 'promtool', 'mailpit', 'toxiproxy'].map((name) =>
        fakeStep(name, events, { heavy: true }),
      ),
      { ...quiet, check: false, logDir: logDir() },
    )
    let running = 0
    let most = 0
    for (const event of events) {
      running += event.endsWith('start') ? 1 : -1
      most = Math.max(most, running)
    }
    expect(most).toBe(4)
    expect(events.filter((event) => event.endsWith('end'))).toHaveLength(6)
  })

  it('when a step fails, then it is reported with its error, the steps needing it are skipped and the others are obtained', async () => {
    const events: string[] = []
    const said: string[] = []
    const results = await runSteps(
      [
        fakeStep('consul', events, { fails: true }),
        fakeStep('engine-images', events, { needs: ['consul'] }),
        fakeStep('jars', events),
      ],
      { check: false, logDir: logDir(), say: (line) => said.push(line) },
    )
    expect(results.map((r) => [r.name, r.outcome, r.detail])).toEqual([
      ['consul', 'failed', 'consul broke'],
      ['engine-images', 'skipped', 'needs consul'],
      ['jars', 'obtained', 'jars obtained'],
    ])
    expect(events).not.toContain('engine-images start')
    expect(said.some((line) => /consul: obtaining the consul \(its output: .*consul\.log\)/.test(line))).toBe(
      true,
    )
  })

  it('when checking only, then nothing is obtained: each step is present or missing, whatever its needs', async () => {
    const events: string[] = []
    const results = await runSteps(
      [fakeStep('consul', events), fakeStep('engine-images', events, { needs: ['consul'], present: true })],
      { ...quiet, check: true, logDir: logDir() },
    )
    expect(results.map((r) => [r.name, r.outcome])).toEqual([
      ['consul', 'missing'],
      ['engine-images', 'present'],
    ])
    expect(events).toEqual([])
  })

  it('when a step needs one nobody declares, then the run refuses to start', async () => {
    await expect(
      runSteps([fakeStep('images', [], { needs: ['nothing'] })], {
        ...quiet,
        check: false,
        logDir: logDir(),
      }),
    ).rejects.toThrow('prerequisite images needs nothing, which nobody declares')
  })

  it('when summarised, then each step has a row with its outcome and seconds', () => {
    const lines = summaryTable([
      { name: 'consul', title: 'Consul v1.16.3', outcome: 'obtained', seconds: 181.25, detail: '/c/consul' },
      { name: 'jars', title: 'the Kafka jars', outcome: 'present', seconds: 0, detail: '/c/jars' },
    ])
    expect(lines[0]).toMatch(/^PREREQUISITE\s+OUTCOME\s+SECONDS\s+DETAIL$/)
    expect(lines[1]).toMatch(/^Consul v1\.16\.3\s+obtained\s+181\.3\s+\/c\/consul$/)
    expect(lines[2]).toMatch(/^the Kafka jars\s+present\s+0\.0\s+\/c\/jars$/)
  })
})

describe('what a purpose selects', () => {
  it('when dev is asked for, then the engines, Jaeger and Mailpit are, with only the Debian packages they use', async () => {
    const all = await repositoryPrerequisites({
      MERIDIAN_INFRA: 'native',
      MERIDIAN_CONTAINER_ENGINE: 'podman',
    })
    const steps = stepsFor(all, parsePurposes('dev'))
    expect(steps.map((step) => step.name).sort()).toEqual([
      'consul',
      'debian',
      'jaeger',
      'kafka-jars',
      'mailpit',
    ])
    const debian = steps.find((step) => step.name === 'debian')!
    expect(debian.purposes).toEqual(purposeSets.dev)
  })

  it("when test is asked for, then every declared step is selected, deploy/src/prerequisites.ts's too", async () => {
    const all = await repositoryPrerequisites({
      MERIDIAN_INFRA: 'native',
      MERIDIAN_CONTAINER_ENGINE: 'podman',
    })
    const names = stepsFor(all, parsePurposes('test')).map((step) => step.name)
    expect(names).toEqual(expect.arrayContaining(['helm', 'kubeconform', 'promtool', 'kubernetes-schemas']))
    expect(names).toEqual(
      expect.arrayContaining([
        'consul',
        'jaeger',
        'toxiproxy',
        'stripe-mock',
        'mailpit',
        'kafka-jars',
        'engine-images',
        'node-bases',
      ]),
    )
    expect(new Set(names).size).toBe(names.length)
  })

  it('when a step of another purpose is needed, then it comes along: engine-images brings consul and the jars', async () => {
    const all = await repositoryPrerequisites({
      MERIDIAN_INFRA: 'native',
      MERIDIAN_CONTAINER_ENGINE: 'podman',
    })
    const names = stepsFor(all, parsePurposes('engine-images')).map((step) => step.name)
    expect(names.sort()).toEqual(['consul', 'debian', 'engine-images', 'kafka-jars'])
  })

  it('when the purposes are misspelt, then the message lists the ones there are', () => {
    expect(() => parsePurposes('engines,tests')).toThrow(
      /--for takes dev, test or some of engines, trace-store/,
    )
    expect(() => parsePurposes('')).toThrow(/--for takes/)
  })
})

describe('a prerequisite a test finds missing', () => {
  it('when a Go tool was never built, then the error names it and ./scripts/prepare, and builds nothing', () => {
    const binDir = mkdtempSync(join(tmpdir(), 'prepare-bin-'))
    const build = {
      name: 'consul',
      title: 'Consul v1.16.3',
      version: 'v1.16.3',
      wrapperDir: join(repoRoot, 'infra', 'consul'),
      mainPackage: 'github.com/hashicorp/consul',
      toolchain: 'local',
      binDir,
    }
    expect(() => builtGoBinary(build)).toThrow(MissingPrerequisite)
    expect(() => builtGoBinary(build)).toThrow(
      'Consul v1.16.3 is missing on this machine: run ./scripts/prepare (it builds it once from the Go module proxy)',
    )
  })
})

describe("--fresh's purge list", () => {
  it('when apt has installed the declared packages alone and others beside them, then only the former (with their dependencies) are purged', async () => {
    const history = join(mkdtempSync(join(tmpdir(), 'apt-history-')), 'history.log')
    writeFileSync(
      history,
      [
        'Start-Date: 2026-05-09  07:29:02',
        'Commandline: apt-get install -y build-essential jq iproute2 python3-venv vim',
        'Install: jq:amd64 (1.6-2.1), vim:amd64 (2:9.0)',
        'End-Date: 2026-05-09  07:30:00',
        '',
        'Start-Date: 2026-11-29  07:24:44',
        'Commandline: apt-get -o Dpkg::Options::=--force-confold install -y -q --no-install-recommends redis-server chromium',
        'Install: redis-tools:amd64 (5:7.0.15-1~deb12u10, automatic), liblzf1:amd64 (3.6-3, automatic), redis-server:amd64 (5:7.0.15-1~deb12u10), chromium:amd64 (156.0)',
        'End-Date: 2026-11-29  07:25:44',
        '',
      ].join('\n'),
    )
    const script = readFileSync(join(repoRoot, 'scripts', 'fresh-machine.sh'), 'utf8')
    // the function's awk over this history, without the dpkg question (nothing here is installed)
    const awk = /done \| (awk -v declared="\$declared" '[\s\S]*?') \| sort -u/.exec(script)?.[1]
    const declared = /local declared="([^"]+)"/.exec(script)?.[1]
    expect(awk && declared).toBeTruthy()
    const listed = execFileSync(
      'bash',
      ['-c', `declared="${declared}"; cat "$1" | ${awk} | sort -u`, 'bash', history],
      {
        encoding: 'utf8',
      },
    )
    expect(listed.trim().split('\n')).toEqual(['chromium', 'liblzf1', 'redis-server', 'redis-tools'])
  })

  it("when read, then its declared packages are exactly the Debian packages infra's preparation declares", async () => {
    const script = readFileSync(join(repoRoot, 'scripts', 'fresh-machine.sh'), 'utf8')
    const declared = /local declared="([^"]+)"/.exec(script)?.[1]?.split(' ') ?? []
    const { debian } = await infraPrerequisites({
      MERIDIAN_INFRA: 'native',
      MERIDIAN_CONTAINER_ENGINE: 'podman',
    })
    expect([...declared].sort()).toEqual([...new Set(debian.map((entry) => entry.package))].sort())
  })
})

describe("--fresh's engines", () => {
  it('when engines recorded their pids in the cache folder (Mailpit among them), then every one is stopped by its pid, and a pid file of a process since gone stops nothing', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'fresh-engines-'))
    const names = ['kafka', 'mailpit', 'postgres', 'some-engine-to-come']
    const engines = names.map((name) => {
      // a process that ends on the signal it is sent, as the engines do
      const child = spawn('sleep', ['600'], { stdio: 'ignore' })
      const startTime = readFileSync(`/proc/${child.pid}/stat`, 'utf8').replace(/.*\) /s, '').split(' ')[19]
      mkdirSync(join(cache, name))
      writeFileSync(join(cache, name, 'meridian.pid'), `${child.pid} ${startTime}\n`)
      const ended = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, signal) => resolve(signal)),
      )
      return { name, ended }
    })
    // a stale file: its pid is no process of ours any more (its start time does not match)
    mkdirSync(join(cache, 'redis'))
    writeFileSync(join(cache, 'redis', 'meridian.pid'), `${process.pid} 1\n`)
    // not execFileSync: this process must reap each child as it ends (a zombie's /proc entry stays, and the script waits on it)
    await promisify(execFile)(
      'bash',
      [
        '-c',
        'say() { :; }; source "$1"; stop_engines_recorded "$2"',
        'bash',
        join(repoRoot, 'scripts', 'fresh-machine.sh'),
        cache,
      ],
      { encoding: 'utf8' },
    )
    const signals = Object.fromEntries(
      await Promise.all(engines.map(async ({ name, ended }) => [name, await ended])),
    )
    expect(signals).toEqual({
      kafka: 'SIGTERM',
      mailpit: 'SIGTERM',
      postgres: 'SIGINT',
      'some-engine-to-come': 'SIGTERM',
    })
  })
})
