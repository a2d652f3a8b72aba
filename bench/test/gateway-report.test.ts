import { describe, expect, it } from 'vitest'
import {
  formatTable,
  formatVerdicts,
  measuringOrder,
  ratiosOf,
  type TargetResult,
  verdictsOf,
} from '../src/gateway/gateway-report.ts'
import { answerProblems } from '../src/gateway/same-answer.ts'

const result = (overrides: Partial<TargetResult>): TargetResult => ({
  target: 'direct',
  requestsPerSecond: 10_000,
  partRequestsPerSecond: [10_000, 10_000],
  totalRequests: 100_000,
  p50Ms: 1,
  p99Ms: 2,
  errors: 0,
  non2xx: 0,
  statusCodes: { 200: 100_000 },
  upstreamCpuMsPerRequest: 0.05,
  proxyCpuMsPerRequest: null,
  upstreamRssMb: 190,
  proxyRssMb: null,
  proxyPeakRssMb: null,
  ...overrides,
})

const proxied = (target: 'gateway' | 'nginx' | 'floor', overrides: Partial<TargetResult>) =>
  result({ target, proxyCpuMsPerRequest: 0.05, proxyRssMb: 100, proxyPeakRssMb: 120, ...overrides })

describe('ratios and verdicts', () => {
  it('when the gateway keeps 80% of direct and its p99 is x1.2 nginx, then both aims are met', () => {
    const ratios = ratiosOf([
      result({}),
      proxied('gateway', { requestsPerSecond: 8000, p99Ms: 3.6, p50Ms: 2, proxyCpuMsPerRequest: 0.1 }),
      proxied('nginx', { requestsPerSecond: 9000, p99Ms: 3, p50Ms: 1.6, proxyCpuMsPerRequest: 0.025 }),
      proxied('floor', { requestsPerSecond: 8500, proxyCpuMsPerRequest: 0.04 }),
    ])
    expect(ratios.gatewayThroughput).toBeCloseTo(0.8)
    expect(ratios.nginxThroughput).toBeCloseTo(0.9)
    expect(ratios.floorThroughput).toBeCloseTo(0.85)
    expect(ratios.gatewayP99OverNginx).toBeCloseTo(1.2)
    expect(ratios.gatewayP50OverNginx).toBeCloseTo(1.25)
    expect(ratios.gatewayCpuOverNginx).toBeCloseTo(4)
    expect(ratios.gatewayCpuOverFloor).toBeCloseTo(2.5)
    expect(verdictsOf(ratios)).toEqual({ keepsThroughput: true, p99WithinNginx: true })
    const text = formatVerdicts(ratios)
    expect(text).toContain(
      'gateway/direct throughput 80.0%, nginx/direct throughput 90.0%, node floor/direct 85.0%\n',
    )
    expect(text).toContain(
      'gateway/nginx p99 x1.20, p50 x1.25, proxy CPU per request x4.00 nginx, x2.50 node floor\n',
    )
    expect(text).toContain('keeps >= 75.0% of direct throughput": yes (80.0%)')
    expect(text).toContain('at most x1.50 nginx\'s": yes (x1.20)')
  })

  it('when the gateway keeps 60% and its p99 is twice nginx, then both verdicts say no with the figure', () => {
    const ratios = ratiosOf([
      result({}),
      proxied('gateway', { requestsPerSecond: 6000, p99Ms: 6 }),
      proxied('nginx', { requestsPerSecond: 9000, p99Ms: 3 }),
    ])
    expect(verdictsOf(ratios)).toEqual({ keepsThroughput: false, p99WithinNginx: false })
    expect(formatVerdicts(ratios)).toContain('direct throughput": no (60.0%)')
    expect(formatVerdicts(ratios)).toContain('nginx\'s": no (x2.00)')
  })

  it('when exactly on the bars (75%, x1.5), then the aims are met', () => {
    const ratios = ratiosOf([
      result({ requestsPerSecond: 1000 }),
      proxied('gateway', { requestsPerSecond: 750, p99Ms: 3 }),
      proxied('nginx', { p99Ms: 2 }),
    ])
    expect(verdictsOf(ratios)).toEqual({ keepsThroughput: true, p99WithinNginx: true })
  })

  it('when the gateway did not run, then its ratios are null and the aims "not measured"', () => {
    const ratios = ratiosOf([
      result({}),
      proxied('nginx', { requestsPerSecond: 8500 }),
      proxied('floor', { requestsPerSecond: 7000 }),
    ])
    expect(ratios.gatewayThroughput).toBeNull()
    expect(ratios.gatewayCpuOverFloor).toBeNull()
    expect(ratios.nginxThroughput).toBeCloseTo(0.85)
    expect(ratios.floorThroughput).toBeCloseTo(0.7)
    expect(verdictsOf(ratios)).toEqual({ keepsThroughput: null, p99WithinNginx: null })
    const text = formatVerdicts(ratios)
    expect(text).toContain(
      'gateway/direct throughput -, nginx/direct throughput 85.0%, node floor/direct 70.0%',
    )
    expect(text).toContain('proxy CPU per request - nginx, - node floor')
    expect(text).toContain('direct throughput": not measured')
  })

  it('when the node floor did not run, then its ratios are null and the aims are judged as before', () => {
    const ratios = ratiosOf([
      result({}),
      proxied('gateway', { requestsPerSecond: 8000, proxyCpuMsPerRequest: 0.1 }),
      proxied('nginx', { requestsPerSecond: 9000 }),
    ])
    expect(ratios.floorThroughput).toBeNull()
    expect(ratios.gatewayCpuOverFloor).toBeNull()
    expect(verdictsOf(ratios)).toEqual({ keepsThroughput: true, p99WithinNginx: true })
    expect(formatVerdicts(ratios)).toContain('nginx/direct throughput 90.0%, node floor/direct -')
    expect(formatVerdicts(ratios)).toContain('proxy CPU per request x2.00 nginx, - node floor')
  })
})

describe('measuring order', () => {
  it('when all four run, then the halves go direct, gateway, nginx, floor, floor, nginx, gateway, direct', () => {
    expect(measuringOrder(['floor', 'nginx', 'direct', 'gateway'])).toEqual([
      'direct',
      'gateway',
      'nginx',
      'floor',
      'floor',
      'nginx',
      'gateway',
      'direct',
    ])
  })

  it('when the gateway is missing, then the others keep the mirrored order', () => {
    expect(measuringOrder(['direct', 'nginx', 'floor'])).toEqual([
      'direct',
      'nginx',
      'floor',
      'floor',
      'nginx',
      'direct',
    ])
  })

  it('when the floor is missing, then direct, gateway and nginx keep the mirrored order', () => {
    expect(measuringOrder(['nginx', 'direct', 'gateway'])).toEqual([
      'direct',
      'gateway',
      'nginx',
      'nginx',
      'gateway',
      'direct',
    ])
  })
})

describe('table', () => {
  it('when printed, then each target has a row and direct has no proxy figures', () => {
    const lines = formatTable([
      result({}),
      proxied('nginx', { requestsPerSecond: 9123.45 }),
      proxied('floor', { requestsPerSecond: 8000, proxyCpuMsPerRequest: 0.04, proxyRssMb: 60 }),
    ]).split('\n')
    expect(lines[0]).toMatch(/^target\s+requests\/s\s+p50 ms\s+p99 ms/)
    expect(lines).toHaveLength(5)
    expect(lines[2]).toMatch(/^direct\s+10000\.0 .* -\s+-$/)
    expect(lines[3]).toMatch(/^nginx\s+9123\.5 .*0\.050\s+100\.0 \(120\.0\)$/)
    expect(lines[4]).toMatch(/^node floor\s+8000\.0 .*0\.040\s+60\.0 \(120\.0\)$/)
  })
})

describe('same answer on every path', () => {
  const answer = { status: 200, contentType: 'application/json; charset=utf-8', body: '{"keys":[]}' }

  it('when all paths answer 200 with the same body, then there is no problem', () => {
    expect(answerProblems({ direct: answer, gateway: answer, nginx: answer })).toEqual([])
  })

  it('when one path answers another status or body, then it is named', () => {
    const problems = answerProblems({
      direct: answer,
      gateway: { ...answer, status: 404, body: '{"error":"not found"}' },
      nginx: answer,
    })
    expect(problems).toEqual(['gateway: status 404, not 200', "gateway: the body differs from direct's"])
  })
})
