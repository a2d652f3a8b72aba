// The realtime payloads' types and schemas say the same: what a client may send type-checks exactly when it validates.
import { Value } from 'typebox/value'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { type DashboardMetricName, DashboardSubscribe, dashboardMetricNames } from '../src/realtime.ts'

describe('dashboard:subscribe', () => {
  it('when its payload type is read, then metrics are the metric names (typecheck runs this file)', () => {
    expectTypeOf<DashboardSubscribe['metrics'][number]>().toEqualTypeOf<DashboardMetricName>()
    const payload: DashboardSubscribe = { metrics: ['activeUsers', 'p95Latency'] }
    expect(Value.Check(DashboardSubscribe, payload)).toBe(true)
  })

  it('when a metric is not one of the names, then the schema refuses it', () => {
    expect(Value.Check(DashboardSubscribe, { metrics: [...dashboardMetricNames] })).toBe(true)
    expect(Value.Check(DashboardSubscribe, { metrics: ['cpu'] })).toBe(false)
  })
})
