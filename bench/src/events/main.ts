// `pnpm --filter @meridian/bench bench:events`: outbox-to-handler latency and sustained rate, NOTIFY or not.

import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureInfra } from '@meridian/infra'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { machineFigures } from '../report.ts'
import { monotonicMs } from './clock.ts'
import { loadEventsBenchConfig } from './events-config.ts'
import { createEventsDatabase, type EventsDatabase } from './events-database.ts'
import {
  aims,
  type DrainResult,
  formatAims,
  formatDrain,
  formatEventsTable,
  formatStages,
  formatSustained,
  type Load,
  type Mode,
  type PhaseResult,
  sustainedOf,
} from './events-report.ts'
import { createEventsTopics } from './events-topics.ts'
import { phaseFigures, steadyRate } from './figures.ts'
import type {
  ChildConfig,
  ConsumerRecords,
  CpuReply,
  PrefillReply,
  RelayRecords,
  Role,
  WriterRun,
} from './ipc.ts'
import { busyShare, cpuTimesOf } from './machine-cpu.ts'
import { type RoleProcess, startRoleProcess } from './role-process.ts'

const resultsFile = fileURLToPath(new URL('../../results/events-latest.json', import.meta.url))
const say = (message: string) => process.stderr.write(`[bench:events] ${message}\n`)

const { undo, run } = benchLifecycle(
  say,
  'cleaned up: processes stopped, topics, consumer groups and database removed',
)

interface Phase {
  mode: Mode
  load: Load
  topic: string
  group: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function runPhase(
  phase: Phase,
  database: EventsDatabase,
  brokers: string,
  config: ReturnType<typeof loadEventsBenchConfig>,
): Promise<PhaseResult> {
  const rate = phase.load === 'paced' ? config.rate : null
  say(
    `${phase.mode}, ${rate === null ? 'writers as fast as they go' : `${rate} events/s`}: ` +
      `starting writer, relay (listen=${phase.mode === 'notify'}) and consumer`,
  )
  await database.reset()
  const base: Omit<ChildConfig, 'role'> = {
    databaseUrl: database.url,
    brokers,
    topic: phase.topic,
    group: phase.group,
    listen: phase.mode === 'notify',
    pollIntervalMs: config.pollIntervalMs,
    concurrency: config.concurrency,
    connections: config.connections,
    aggregates: config.aggregates,
  }
  const roles: Role[] = ['writer', 'relay', 'consumer']
  const starts = await Promise.allSettled(
    roles.map((role) => startChild({ ...base, role }, config.inheritedEnv)),
  )
  const processes: Partial<Record<Role, RoleProcess>> = {}
  for (const start of starts) {
    if (start.status === 'fulfilled') processes[start.value.role] = start.value
  }
  const failed = starts.find((start) => start.status === 'rejected')
  if (failed) throw failed.reason
  const { writer, relay, consumer } = processes as Record<Role, RoleProcess>
  say(`  pids: writer ${writer.pid}, relay ${relay.pid}, consumer ${consumer.pid}`)

  const totalSeconds = config.warmupSeconds + config.measureSeconds
  const maxBacklog = rate === null ? config.maxBacklog : null
  say(
    `  warm-up ${config.warmupSeconds} s, then ${config.measureSeconds} s measured` +
      (rate === null ? (maxBacklog === null ? ', no backlog bound' : `, backlog bound ${maxBacklog}`) : ''),
  )
  // the writer learns the consumer's count only to respect the backlog bound
  if (maxBacklog !== null) consumer.onProgress((count) => writer.tell({ kind: 'delivered', count }))

  // CPU of each process and of the machine at both ends of the measured window
  const sample = async () => {
    const machine = cpuTimesOf()
    const each = await Promise.all(
      [writer, relay, consumer].map((child) =>
        child.request<CpuReply>({ kind: 'cpu' }).then(
          (reply) => reply.cpuMicros,
          () => Number.NaN,
        ),
      ),
    )
    return { machine, each }
  }
  const sampledAt = (ms: number) => sleep(ms).then(sample)
  const runStart = monotonicMs()
  const [run, windowStart, windowEnd] = await Promise.all([
    writer.request<WriterRun>(
      { kind: 'run', rate, seconds: totalSeconds, maxBacklog },
      (totalSeconds + 60) * 1000,
    ),
    sampledAt(config.warmupSeconds * 1000),
    sampledAt(totalSeconds * 1000),
  ])
  consumer.onProgress(undefined)
  if (run.startedAt - runStart > 50)
    say(`  note: the writer started ${Math.round(run.startedAt - runStart)} ms late`)
  const appended = run.appendedAt.filter((at) => !Number.isNaN(at)).length
  // The paced phases must deliver everything; a saturated pipeline is left to its backlog (the next phase starts from
  // empty tables and a topic of its own).
  const drainMs = phase.load === 'paced' ? 20_000 : 3000
  const drainUntil = Date.now() + drainMs
  while (consumer.progress < appended && Date.now() < drainUntil) await sleep(50)
  if (phase.load === 'paced' && consumer.progress < appended)
    say(
      `  WARNING: ${appended - consumer.progress} events not handled ${drainMs / 1000} s after the last append`,
    )

  const received = await consumer.request<ConsumerRecords>({ kind: 'collect' })
  const published = await relay.request<RelayRecords>({ kind: 'collect' })
  await Promise.all([writer.stop(), relay.stop(), consumer.stop()])
  const windowCpu = (index: number) =>
    Math.round(((windowEnd.each[index] ?? Number.NaN) - (windowStart.each[index] ?? Number.NaN)) / 1000)

  const figures = phaseFigures({
    window: {
      from: run.startedAt + config.warmupSeconds * 1000,
      to: run.startedAt + totalSeconds * 1000,
    },
    appendedAt: run.appendedAt,
    committedAt: run.committedAt,
    received,
    published,
  })
  if (run.errors > 0) say(`  WARNING: ${run.errors} append transactions failed`)
  if (figures.duplicates > 0) say(`  WARNING: ${figures.duplicates} events reached the handler twice`)
  say(
    `  offered ${Math.round(figures.offeredPerSecond)}/s, delivered ${Math.round(figures.deliveredPerSecond)}/s, ` +
      `p99 ${figures.latency.p99Ms.toFixed(1)} ms, backlog ${figures.backlog.start} > ${figures.backlog.end}`,
  )
  return {
    mode: phase.mode,
    load: phase.load,
    targetRate: rate,
    maxBacklog,
    figures,
    windowCpuMs: { writer: windowCpu(0), relay: windowCpu(1), consumer: windowCpu(2) },
    machineBusy: busyShare(windowStart.machine, windowEnd.machine),
  }
}

/** Starts one child and registers its stop with the cleanup. */
async function startChild(config: ChildConfig, env: NodeJS.ProcessEnv): Promise<RoleProcess> {
  const child = await startRoleProcess(config, env)
  undo.push({ label: `stop the ${child.role} (pid ${child.pid})`, run: () => child.stop() })
  return child
}

/**
 * The pipeline alone: the outbox is filled first (transactions of 100 events, no relay running), then the consumer
 * joins and the relay starts; relay and consumer empty it with no writer competing for the CPU. With rows always
 * waiting the relay never sleeps, so the wake-up plays no part.
 */
async function runDrain(
  phase: Phase,
  database: EventsDatabase,
  brokers: string,
  config: ReturnType<typeof loadEventsBenchConfig>,
  events: number,
): Promise<DrainResult> {
  say(`pipeline alone: filling the outbox with ${events} events, then starting consumer and relay`)
  await database.reset()
  const base: ChildConfig = {
    role: 'writer',
    databaseUrl: database.url,
    brokers,
    topic: phase.topic,
    group: phase.group,
    listen: true,
    pollIntervalMs: config.pollIntervalMs,
    concurrency: config.concurrency,
    connections: config.connections,
    aggregates: config.aggregates,
  }
  const writer = await startChild(base, config.inheritedEnv)
  const filled = await writer.request<PrefillReply>({ kind: 'prefill', events, perTransaction: 100 }, 120_000)
  await writer.stop()
  say(`  ${filled.appended} events appended in ${filled.seconds.toFixed(1)} s`)

  const consumer = await startChild({ ...base, role: 'consumer' }, config.inheritedEnv)
  const machineBefore = cpuTimesOf()
  const relay = await startChild({ ...base, role: 'relay' }, config.inheritedEnv)
  say(`  pids: consumer ${consumer.pid}, relay ${relay.pid}`)
  const until = Date.now() + 60_000
  while (consumer.progress < filled.appended && Date.now() < until) await sleep(50)
  const machineAfter = cpuTimesOf()
  const received = await consumer.request<ConsumerRecords>({ kind: 'collect' })
  const published = await relay.request<RelayRecords>({ kind: 'collect' })
  await Promise.all([relay.stop(), consumer.stop()])

  const ascending = (values: number[]) => [...values].sort((a, b) => a - b)
  const result: DrainResult = {
    events: filled.appended,
    publishedPerSecond: steadyRate(ascending(published.publishedAt), filled.appended),
    deliveredPerSecond: steadyRate(ascending(received.receivedAt), filled.appended),
    delivered: received.receivedAt.length,
    machineBusy: busyShare(machineBefore, machineAfter),
  }
  say(
    `  published ${Math.round(result.publishedPerSecond)}/s, delivered ${Math.round(result.deliveredPerSecond)}/s` +
      (result.delivered < result.events ? `; WARNING: only ${result.delivered} handled within 60 s` : ''),
  )
  return result
}

async function main(): Promise<void> {
  const config = loadEventsBenchConfig()
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const endpoints = await ensureInfra()

  const database = await createEventsDatabase(endpoints.databaseUrl)
  undo.push({ label: `drop database ${database.name}`, run: () => database.drop() })

  // Each phase has a topic of its own (= the events' type), so a backlog left by one never reaches the next.
  const runId = randomBytes(4).toString('hex')
  const phases: Phase[] = (
    [
      ['notify', 'paced'],
      ['poll', 'paced'],
      ['notify', 'max'],
      ['poll', 'max'],
    ] as const
  ).map(([mode, load]) => ({
    mode,
    load,
    topic: `bench-events-${runId}-${mode}-${load}`,
    group: `bench-events-${runId}-${mode}-${load}`,
  }))
  const drainPhase: Phase = {
    mode: 'notify',
    load: 'max',
    topic: `bench-events-${runId}-drain`,
    group: `bench-events-${runId}-drain`,
  }
  const everyPhase = config.drainEvents > 0 ? [...phases, drainPhase] : phases
  const topics = await createEventsTopics(
    endpoints.kafkaBrokers,
    everyPhase.map((phase) => phase.topic),
    config.partitions,
  )
  undo.push({
    label: `delete ${topics.all.length} topics and ${everyPhase.length} consumer groups`,
    run: () => topics.delete(everyPhase.map((phase) => phase.group)),
  })
  say(
    `database ${database.name} migrated; ${topics.all.length} topics of ${config.partitions} partitions created ` +
      `(bench-events-${runId}-*)`,
  )

  const results: PhaseResult[] = []
  for (const phase of phases) {
    results.push(await runPhase(phase, database, endpoints.kafkaBrokers, config))
  }
  const drain =
    config.drainEvents > 0
      ? await runDrain(drainPhase, database, endpoints.kafkaBrokers, config, config.drainEvents)
      : undefined

  const sustained = sustainedOf(results)
  const cpuCount = cpus().length
  const loadAfter = loadavg()[0] ?? 0
  const machineLoad =
    `machine load average: ${loadBefore.toFixed(2)} before the run, ${loadAfter.toFixed(2)} after, ` +
    `on ${cpuCount} CPUs`
  const busy = loadBefore > cpuCount / 2
  process.stdout.write(
    `\n${formatEventsTable(results)}\n\n${formatStages(results)}\n${formatSustained(sustained, config.maxBacklog)}\n` +
      `${formatDrain(drain)}\n${formatAims(results, drain)}\n${machineLoad}` +
      `${busy ? ' (other work was running before the run: the figures are noisy)' : ''}\n`,
  )

  await mkdir(dirname(resultsFile), { recursive: true })
  const report = {
    measuredAt: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: machineFigures(loadBefore, loadAfter),
    settings: {
      warmupSeconds: config.warmupSeconds,
      measureSeconds: config.measureSeconds,
      rate: config.rate,
      connections: config.connections,
      partitions: config.partitions,
      concurrency: config.concurrency,
      pollIntervalMs: config.pollIntervalMs,
      aggregates: config.aggregates,
      maxBacklog: config.maxBacklog,
      drainEvents: config.drainEvents,
    },
    aims,
    results,
    sustained,
    drain,
  }
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`)
  say(`wrote ${resultsFile}`)
}

await run(main)
