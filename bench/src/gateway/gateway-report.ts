// The gateway benchmark's figures as a table, the ratios to direct, to nginx and to the node floor, and the verdicts
// against the aims.
import type { LoadFigures } from '../load.ts'

/** `floor`: the least a Node reverse proxy does (node-floor.ts), the bound any Node proxy meets on this machine. */
export type Target = 'direct' | 'gateway' | 'nginx' | 'floor'

export const targetLabel: Record<Target, string> = {
  direct: 'direct',
  gateway: 'gateway',
  nginx: 'nginx',
  floor: 'node floor',
}

export interface TargetResult extends LoadFigures {
  target: Target
  /** the auth process's CPU time per answered request, ms */
  upstreamCpuMsPerRequest: number
  /**
   * the proxy's (gateway or node floor process, or nginx master and workers) CPU time per answered request, ms;
   * null direct
   */
  proxyCpuMsPerRequest: number | null
  /** the auth process's RSS after the measured runs, MB */
  upstreamRssMb: number
  /** the proxy's RSS after the measured runs, MB; null direct */
  proxyRssMb: number | null
  /** the proxy's peak RSS since it started (VmHWM, summed over nginx's processes), MB; null direct */
  proxyPeakRssMb: number | null
}

/** The aims. */
export const aims = Object.freeze({
  /** the gateway keeps at least this share of direct throughput */
  gatewayThroughputShare: 0.75,
  /** the gateway's p99 is at most this multiple of nginx's */
  p99OverNginx: 1.5,
})

export interface GatewayRatios {
  /** gateway requests/s over direct requests/s */
  gatewayThroughput: number | null
  /** nginx requests/s over direct requests/s */
  nginxThroughput: number | null
  /** node floor requests/s over direct requests/s: what any Node proxy keeps at best here */
  floorThroughput: number | null
  /** gateway p99 over nginx p99 */
  gatewayP99OverNginx: number | null
  /** gateway p50 over nginx p50 */
  gatewayP50OverNginx: number | null
  /** the gateway process's CPU per request over nginx's */
  gatewayCpuOverNginx: number | null
  /** the gateway process's CPU per request over the node floor's: what the gateway's own code costs */
  gatewayCpuOverFloor: number | null
}

const ratio = (numerator: number | null | undefined, denominator: number | null | undefined) =>
  numerator === null || numerator === undefined || !denominator ? null : numerator / denominator

export function ratiosOf(results: TargetResult[]): GatewayRatios {
  const of = (target: Target) => results.find((result) => result.target === target)
  const direct = of('direct')
  const gateway = of('gateway')
  const nginx = of('nginx')
  const floor = of('floor')
  return {
    gatewayThroughput: ratio(gateway?.requestsPerSecond, direct?.requestsPerSecond),
    nginxThroughput: ratio(nginx?.requestsPerSecond, direct?.requestsPerSecond),
    floorThroughput: ratio(floor?.requestsPerSecond, direct?.requestsPerSecond),
    gatewayP99OverNginx: ratio(gateway?.p99Ms, nginx?.p99Ms),
    gatewayP50OverNginx: ratio(gateway?.p50Ms, nginx?.p50Ms),
    gatewayCpuOverNginx: ratio(gateway?.proxyCpuMsPerRequest, nginx?.proxyCpuMsPerRequest),
    gatewayCpuOverFloor: ratio(gateway?.proxyCpuMsPerRequest, floor?.proxyCpuMsPerRequest),
  }
}

export interface Verdicts {
  /** null: not measured (no gateway, or no direct run) */
  keepsThroughput: boolean | null
  p99WithinNginx: boolean | null
}

export function verdictsOf(ratios: GatewayRatios): Verdicts {
  return {
    keepsThroughput:
      ratios.gatewayThroughput === null ? null : ratios.gatewayThroughput >= aims.gatewayThroughputShare,
    p99WithinNginx:
      ratios.gatewayP99OverNginx === null ? null : ratios.gatewayP99OverNginx <= aims.p99OverNginx,
  }
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`
const times = (value: number) => `x${value.toFixed(2)}`
const orDash = (value: number | null, format: (value: number) => string) =>
  value === null ? '-' : format(value)

export function formatTable(results: TargetResult[]): string {
  const header = [
    'target',
    'requests/s',
    'p50 ms',
    'p99 ms',
    'errors/non-2xx',
    'auth CPU ms/req',
    'proxy CPU ms/req',
    'proxy RSS MB (peak)',
  ]
  const rows = results.map((r) => [
    targetLabel[r.target],
    r.requestsPerSecond.toFixed(1),
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    `${r.errors}/${r.non2xx}`,
    r.upstreamCpuMsPerRequest.toFixed(3),
    orDash(r.proxyCpuMsPerRequest, (value) => value.toFixed(3)),
    r.proxyRssMb === null ? '-' : `${r.proxyRssMb.toFixed(1)} (${(r.proxyPeakRssMb ?? 0).toFixed(1)})`,
  ])
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  // the name left-aligned, figures right-aligned
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

export function formatVerdicts(ratios: GatewayRatios): string {
  const verdicts = verdictsOf(ratios)
  const answer = (value: boolean | null, detail: string) =>
    value === null ? 'not measured' : `${value ? 'yes' : 'no'} (${detail})`
  return [
    `gateway/direct throughput ${orDash(ratios.gatewayThroughput, percent)}, ` +
      `nginx/direct throughput ${orDash(ratios.nginxThroughput, percent)}, ` +
      `${targetLabel.floor}/direct ${orDash(ratios.floorThroughput, percent)}`,
    `gateway/nginx p99 ${orDash(ratios.gatewayP99OverNginx, times)}, ` +
      `p50 ${orDash(ratios.gatewayP50OverNginx, times)}, ` +
      `proxy CPU per request ${orDash(ratios.gatewayCpuOverNginx, times)} nginx, ` +
      `${orDash(ratios.gatewayCpuOverFloor, times)} ${targetLabel.floor}`,
    `aim "the gateway keeps >= ${percent(aims.gatewayThroughputShare)} of direct throughput": ${answer(
      verdicts.keepsThroughput,
      orDash(ratios.gatewayThroughput, percent),
    )}`,
    `aim "the gateway's p99 is at most x${aims.p99OverNginx.toFixed(2)} nginx's": ${answer(
      verdicts.p99WithinNginx,
      orDash(ratios.gatewayP99OverNginx, times),
    )}`,
  ].join('\n')
}

/**
 * The measured halves, interleaved so a machine that speeds up or slows down during the run weighs on every target
 * alike: direct, gateway, nginx, floor, floor, nginx, gateway, direct (without the targets that are not running).
 */
export function measuringOrder(targets: readonly Target[]): Target[] {
  const forward = (['direct', 'gateway', 'nginx', 'floor'] as const).filter((target) =>
    targets.includes(target),
  )
  return [...forward, ...[...forward].reverse()]
}
