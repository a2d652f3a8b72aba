// deploy/observability's rules and dashboards: promtool checks and unit-tests the rules and checks the scrape
// configuration; the dashboards are Grafana JSON whose every query goes through the `datasource` variable; the
// PromQL reader that the metric contract (tests/e2e/test/metrics-contract.test.ts) relies on finds what it must and
// reports a name nobody exposes.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '@meridian/infra'
import { scaledMs } from '@meridian/infra/test-time'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type DeployTools,
  dashboardExpressions,
  dashboardFiles,
  dashboardsAsRules,
  datasourceVariable,
  deployTools,
  metricNamesOf,
  missingMetrics,
  panelsOf,
  prometheusConfigFile,
  readDashboard,
  ruleExpressions,
  rulesFile,
  rulesTestFile,
  withVariablesResolved,
} from '../src/index.ts'

let tools: DeployTools
const scratch = mkdtempSync(join(tmpdir(), 'meridian-observability-'))
beforeAll(async () => {
  tools = deployTools()
})
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** promtool's exit code and output (it exits 1 on a finding). */
async function promtool(args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    return { ok: true, output: await run(tools.promtool, args, { timeoutMs: scaledMs(60_000) }) }
  } catch (error) {
    return { ok: false, output: (error as Error).message }
  }
}

const alerts = [
  'MeridianInstanceDown',
  'MeridianHighErrorRate',
  'MeridianHighLatencyP95',
  'MeridianConsumerStalled',
  'MeridianDeadLetters',
  'MeridianOutboxBacklog',
  'MeridianSagaEscalated',
  'MeridianProcessEscalated',
  'MeridianRealtimeSaturation',
]

describe('the Prometheus rules', () => {
  it('when promtool checks alerts.yml, then every rule is valid', async () => {
    const { ok, output } = await promtool(['check', 'rules', rulesFile])
    expect(output).toContain('SUCCESS')
    expect(ok).toBe(true)
  })

  it('when promtool runs tests/alerts.test.yml, then each alert fires on its broken series and not on the healthy ones', async () => {
    const { ok, output } = await promtool(['test', 'rules', rulesTestFile])
    expect(output).toContain('SUCCESS')
    expect(ok).toBe(true)
  })

  it('when the rules are listed, then every alert has a unit test, a severity, a summary and a runbook in operations.md', () => {
    const rules = readFileSync(rulesFile, 'utf8')
    const unitTests = readFileSync(rulesTestFile, 'utf8')
    const operations = readFileSync(join(rulesFile, '../../../../docs/how-to/operations.md'), 'utf8')
    const anchors = new Set(
      [...operations.matchAll(/^#+ (.+)$/gm)].map(([, title]) =>
        title!
          .toLowerCase()
          .replace(/[^\w\s-]/g, '')
          .replace(/\s/g, '-'),
      ),
    )
    for (const alert of alerts) {
      expect(rules).toContain(`alert: ${alert}\n`)
      expect(unitTests).toContain(`alertname: ${alert}\n`)
    }
    const runbooks = [...rules.matchAll(/runbook: docs\/how-to\/operations\.md#([\w-]+)/g)].map(
      ([, anchor]) => anchor,
    )
    expect(runbooks).toHaveLength(alerts.length)
    for (const anchor of runbooks)
      expect(anchors, `operations.md has no section #${anchor}`).toContain(anchor)
    expect([...rules.matchAll(/severity: (critical|warning)\n/g)]).toHaveLength(alerts.length)
  })

  it('when a rule is broken, then promtool check rules fails and names it', async () => {
    const broken = join(scratch, 'broken.yml')
    writeFileSync(
      broken,
      'groups:\n  - name: broken\n    rules:\n      - alert: Unbalanced\n        expr: sum(rate(events_published_total[5m])\n',
    )
    const { ok, output } = await promtool(['check', 'rules', broken])
    expect(ok).toBe(false)
    expect(output).toContain('FAILED')
  })

  it('when an alert is expected that the series do not raise, then promtool test rules fails', async () => {
    const folder = join(scratch, 'unit')
    cpSync(join(rulesFile, '..'), folder, { recursive: true })
    const test = join(folder, 'tests', 'alerts.test.yml')
    // the healthy payment instance expected down
    writeFileSync(
      test,
      readFileSync(test, 'utf8').replace(
        'service: order, instance: 127.0.0.1:3003 }',
        'service: payment, instance: 127.0.0.1:3004 }',
      ),
    )
    const { ok, output } = await promtool(['test', 'rules', test])
    expect(ok).toBe(false)
    expect(output).toContain('MeridianInstanceDown')
  })
})

describe('the Prometheus configuration', () => {
  it('when promtool checks prometheus.yml, then the scrape configuration and the rules it loads are valid', async () => {
    const { ok, output } = await promtool(['check', 'config', prometheusConfigFile])
    expect(output).toContain('SUCCESS')
    expect(ok).toBe(true)
  })

  it('when the scrape configuration discovers targets, then it asks Consul on 127.0.0.1:8500 and labels them by service', () => {
    const config = readFileSync(prometheusConfigFile, 'utf8')
    expect(config).toContain('server: 127.0.0.1:8500')
    expect(config).toMatch(/source_labels: \[__meta_consul_service\]\n\s+target_label: service/)
    expect(config).toContain('- alerts.yml')
  })
})

describe('the Grafana dashboards', () => {
  const files = dashboardFiles()

  it('when the folder is read, then it holds the four dashboards', () => {
    expect(files.map((file) => file.slice(file.lastIndexOf('/') + 1))).toEqual([
      'meridian-events.json',
      'meridian-realtime.json',
      'meridian-red.json',
      'meridian-saga.json',
    ])
  })

  it.each(files)(
    'when %s is read, then it is a dashboard of unique panel ids whose every query uses the datasource variable',
    (file) => {
      const dashboard = readDashboard(file)
      expect(dashboard.uid).toMatch(/^meridian-/)
      expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
      const variables = dashboard.templating?.list ?? []
      expect(variables.find((variable) => variable.name === 'datasource')).toMatchObject({
        type: 'datasource',
        query: 'prometheus',
      })
      const panels = panelsOf(dashboard)
      const ids = panels.map((panel) => panel.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(ids.every((id) => Number.isInteger(id))).toBe(true)
      const variable = { type: 'prometheus', uid: datasourceVariable }
      let targets = 0
      for (const panel of panels) {
        if (!panel.targets) continue
        expect(panel.datasource, `panel ${panel.id}`).toEqual(variable)
        for (const target of panel.targets) {
          targets += 1
          expect(target.datasource, `panel ${panel.id} target ${target.refId}`).toEqual(variable)
          expect(target.expr).toBeTruthy()
        }
      }
      expect(targets).toBeGreaterThan(0)
      for (const other of variables.filter((entry) => entry.type === 'query'))
        expect(other.datasource).toEqual(variable)
      // no data source is named by uid anywhere else in the file
      const uids = [...readFileSync(file, 'utf8').matchAll(/"uid": "([^"]*)"/g)].map(([, uid]) => uid)
      expect(uids.filter((uid) => uid !== datasourceVariable && uid !== dashboard.uid)).toEqual([])
    },
  )

  it("when every panel's and variable's query is given to promtool as a recording rule, then each parses", async () => {
    const expressions = files.flatMap((file) => dashboardExpressions(file))
    const rules = join(scratch, 'dashboards.yml')
    writeFileSync(rules, dashboardsAsRules(expressions))
    const { ok, output } = await promtool(['check', 'rules', rules])
    expect(output).toContain(`SUCCESS: ${expressions.length} rules found`)
    expect(ok).toBe(true)
  })

  it('when a panel holds a query that is not PromQL, then promtool check rules fails on it', async () => {
    const file = join(scratch, 'broken-dashboard.json')
    writeFileSync(
      file,
      JSON.stringify({
        panels: [
          { id: 1, title: 'broken', targets: [{ expr: 'sum by (service (rate(up[$__rate_interval]))' }] },
        ],
      }),
    )
    const rules = join(scratch, 'broken-dashboard.yml')
    writeFileSync(rules, dashboardsAsRules(dashboardExpressions(file)))
    const { ok, output } = await promtool(['check', 'rules', rules])
    expect(ok).toBe(false)
    expect(output).toContain('FAILED')
  })

  it("when Grafana's variables are resolved, then ranges get a duration and matchers match anything", () => {
    expect(
      withVariablesResolved(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's ${name} form of a variable, not a template
        'sum(rate(x{service=~"$service",topic=~"${topic}"}[$__rate_interval])) / sum(increase(y[$__range]))',
      ),
    ).toBe('sum(rate(x{service=~".*",topic=~".*"}[5m])) / sum(increase(y[5m]))')
  })
})

describe('the PromQL reader of the metric contract', () => {
  it('when an expression has functions, matchers, ranges, grouping and numbers, then only its metrics are named', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.95, sum by (service, le) (rate(http_request_duration_seconds_bucket{route!~"/health.*",status=~"5.."}[$__rate_interval]))) > 1e3',
      ),
    ).toEqual(['http_request_duration_seconds_bucket'])
    expect(
      metricNamesOf(
        'sum by (topic) (rate(events_published_total[5m] offset 1h)) - on (topic) group_right sum by (topic, group) (rate(events_consumed_total{topic=~"$topic"}[$__range]))',
      ),
    ).toEqual(['events_published_total', 'events_consumed_total'])
    expect(
      metricNamesOf('up{job="meridian"} == 0 and on (service) meridian:http_requests:rate5m > 0.1'),
    ).toEqual(['up', 'meridian:http_requests:rate5m'])
  })

  it('when the rules and dashboards are read, then every expression is found', () => {
    const { expressions, recorded } = ruleExpressions(rulesFile)
    expect(expressions.length).toBeGreaterThanOrEqual(alerts.length + recorded.size)
    expect(recorded).toContain('meridian:http_errors:ratio5m')
    const panels = dashboardFiles().flatMap((file) => dashboardExpressions(file))
    expect(panels.some(({ where }) => where === 'variable service')).toBe(true)
    expect(panels.length).toBeGreaterThan(30)
  })

  it('when a rule reads a metric that no service exposes, then it is reported with its file, rule and name', () => {
    const file = join(scratch, 'made-up.yml')
    writeFileSync(
      file,
      [
        'groups:',
        '  - name: made-up',
        '    rules:',
        '      - record: made:up:rate5m',
        '        expr: sum(rate(http_request_duration_seconds_count[5m]))',
        '      - alert: MadeUp',
        '        expr: made:up:rate5m > 1 and meridian_orders_lost_total > 0 or http_request_duration_seconds_bucket > 0 or up == 0',
        '      - alert: NotAHistogram',
        '        expr: events_published_total_count > 0',
      ].join('\n'),
    )
    const { expressions, recorded } = ruleExpressions(file)
    const exposed = new Map([
      ['http_request_duration_seconds', 'histogram'],
      ['events_published_total', 'counter'],
    ])
    expect(missingMetrics(expressions, exposed, recorded)).toEqual([
      { file, where: 'made-up/MadeUp', name: 'meridian_orders_lost_total' },
      { file, where: 'made-up/NotAHistogram', name: 'events_published_total_count' },
    ])
  })
})
