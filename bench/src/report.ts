// The figures as a table, the chassis/bare throughput ratios and the verdict against the 85% bar.
import { cpus, totalmem } from 'node:os'
import type { ServerName } from './ipc.ts'
import { type LoadFigures, type Scenario, scenarioLabel } from './load.ts'

export interface RunResult extends LoadFigures {
  scenario: Scenario
  server: ServerName
  /** the server's highest RSS during the measured run, MB */
  peakRssMb: number
  /** its RSS when the measured runs ended, MB */
  rssMb: number
  /** server process CPU time (all threads) per request answered, ms: steadier than requests/s on a busy machine */
  cpuMsPerRequest: number
}

export interface ScenarioRatio {
  scenario: Scenario
  /** chassis requests/s divided by bare requests/s */
  throughput: number
  /** chassis p50 divided by bare p50 */
  p50Latency: number
  /** chassis CPU per request divided by bare CPU per request */
  cpuPerRequest: number
}

/** The share of bare throughput the chassis must keep. */
export const throughputBar = 0.85

export const toMb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

export function ratiosOf(results: RunResult[]): ScenarioRatio[] {
  const scenarios = [...new Set(results.map((result) => result.scenario))]
  return scenarios.flatMap((scenario) => {
    const chassis = results.find((r) => r.scenario === scenario && r.server === 'chassis')
    const bare = results.find((r) => r.scenario === scenario && r.server === 'bare')
    if (!chassis || !bare || bare.requestsPerSecond === 0 || bare.p50Ms === 0 || bare.cpuMsPerRequest === 0) {
      return []
    }
    return [
      {
        scenario,
        throughput: chassis.requestsPerSecond / bare.requestsPerSecond,
        p50Latency: chassis.p50Ms / bare.p50Ms,
        cpuPerRequest: chassis.cpuMsPerRequest / bare.cpuMsPerRequest,
      },
    ]
  })
}

export const keepsThroughput = (ratios: ScenarioRatio[]) =>
  ratios.length > 0 && ratios.every((ratio) => ratio.throughput >= throughputBar)

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`

export function formatTable(results: RunResult[]): string {
  const header = [
    'scenario',
    'server',
    'requests/s',
    'p50 ms',
    'p99 ms',
    'errors/non-2xx',
    'RSS MB (peak)',
    'CPU ms/req',
  ]
  const rows = results.map((r) => [
    scenarioLabel[r.scenario],
    r.server,
    r.requestsPerSecond.toFixed(1),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    `${r.errors}/${r.non2xx}`,
    `${r.rssMb.toFixed(1)} (${r.peakRssMb.toFixed(1)})`,
    r.cpuMsPerRequest.toFixed(3),
  ])
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  // text columns left-aligned, figures right-aligned
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

export function formatVerdict(ratios: ScenarioRatio[]): string {
  const lines = ratios.map(
    (ratio) =>
      `chassis/bare ${scenarioLabel[ratio.scenario]}: throughput ${percent(ratio.throughput)}, ` +
      `p50 latency x${ratio.p50Latency.toFixed(2)}, CPU per request x${ratio.cpuPerRequest.toFixed(2)}`,
  )
  const failing = ratios.filter((ratio) => ratio.throughput < throughputBar)
  lines.push(
    keepsThroughput(ratios)
      ? `the chassis keeps >= ${percent(throughputBar)} of bare throughput in every scenario: yes`
      : `the chassis keeps >= ${percent(throughputBar)} of bare throughput in every scenario: no (${
          failing.length > 0
            ? failing.map((r) => `${scenarioLabel[r.scenario]} at ${percent(r.throughput)}`).join(', ')
            : 'no complete pair of runs'
        })`,
  )
  return lines.join('\n')
}

/** The machine a run was measured on, for the results file. */
export function machineFigures(loadAverageBefore: number, loadAverageAfter?: number) {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverageBefore,
    ...(loadAverageAfter === undefined ? {} : { loadAverageAfter }),
    memoryMb: toMb(totalmem()),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  }
}
