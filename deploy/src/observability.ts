// deploy/observability's files as the checks read them: the PromQL of the Prometheus rules and of the Grafana
// dashboards, the metric names each expression reads, and the families a service's Prometheus text exposes.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'
import { deployDir } from './tools.ts'

export const observabilityDir = join(deployDir, 'observability')
export const rulesFile = join(observabilityDir, 'prometheus', 'alerts.yml')
export const rulesTestFile = join(observabilityDir, 'prometheus', 'tests', 'alerts.test.yml')
export const prometheusConfigFile = join(observabilityDir, 'prometheus', 'prometheus.yml')
export const dashboardsDir = join(observabilityDir, 'grafana')

/** How a dashboard's panels name their data source: Grafana's `datasource` variable, never a uid of one Grafana. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JavaScript template
export const datasourceVariable = '${datasource}'

/** One PromQL expression of a file, and where in it. */
export interface Expression {
  file: string
  /** the rule (`group/alert` or `group/record`), or the dashboard's panel (`panel 3 "title"` or `variable service`) */
  where: string
  expr: string
}

/** Series Prometheus makes itself rather than a service: `up` of every target. */
const prometheusOwn = new Set(['up'])

interface RuleFile {
  groups?: { name?: string; rules?: { alert?: string; record?: string; expr?: unknown }[] }[]
}

/** The expressions of a rule file and the names it records (recording rules are not a service's metrics). */
export function ruleExpressions(file: string): { expressions: Expression[]; recorded: Set<string> } {
  const document = parse(readFileSync(file, 'utf8')) as RuleFile | null
  const expressions: Expression[] = []
  const recorded = new Set<string>()
  for (const group of document?.groups ?? []) {
    for (const rule of group.rules ?? []) {
      if (rule.record) recorded.add(rule.record)
      if (typeof rule.expr !== 'string')
        throw new Error(`${file}: ${group.name}: a rule without an expression`)
      expressions.push({ file, where: `${group.name}/${rule.alert ?? rule.record}`, expr: rule.expr })
    }
  }
  return { expressions, recorded }
}

/** A Grafana dashboard as far as the checks read it. */
export interface Dashboard {
  uid?: string
  title?: string
  schemaVersion?: number
  templating?: { list?: DashboardVariable[] }
  panels?: Panel[]
}

export interface DashboardVariable {
  name: string
  type: string
  datasource?: unknown
  query?: unknown
}

export interface Panel {
  id?: number
  title?: string
  type?: string
  datasource?: unknown
  targets?: { expr?: string; datasource?: unknown; refId?: string }[]
  /** a collapsed row's panels */
  panels?: Panel[]
}

/** The dashboards of deploy/observability/grafana (file name -> parsed JSON). */
export function dashboardFiles(dir: string = dashboardsDir): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name))
}

export function readDashboard(file: string): Dashboard {
  return JSON.parse(readFileSync(file, 'utf8')) as Dashboard
}

/** Every panel of a dashboard, those of collapsed rows included. */
export function panelsOf(dashboard: Dashboard): Panel[] {
  return (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])])
}

/** The PromQL of a dashboard: each target's, and the metric of each `label_values(metric, label)` variable. */
export function dashboardExpressions(file: string, dashboard: Dashboard = readDashboard(file)): Expression[] {
  const expressions: Expression[] = []
  for (const panel of panelsOf(dashboard)) {
    for (const target of panel.targets ?? []) {
      if (typeof target.expr === 'string')
        expressions.push({ file, where: `panel ${panel.id} "${panel.title}"`, expr: target.expr })
    }
  }
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue
    const query =
      typeof variable.query === 'string' ? variable.query : (variable.query as { query?: unknown })?.query
    if (typeof query !== 'string') continue
    // label_values(metric, label) reads the metric (label_values(label) alone reads none)
    const selector = /^\s*label_values\((.*),\s*[A-Za-z_]\w*\s*\)\s*$/.exec(query)?.[1]
    expressions.push({ file, where: `variable ${variable.name}`, expr: selector ?? query })
  }
  return expressions
}

/** PromQL's words that are not metric names where they stand outside a function call. */
const keywords = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
])

/**
 * The metric names an expression reads. Strings, label matchers ({…}), ranges and subqueries ([…]) and the label
 * lists of by/without/on/ignoring/group_left/group_right are removed first; what is left that names no function and
 * is no keyword is a metric. Grafana's variables ($service, $__rate_interval) only stand inside matchers and ranges.
 */
export function metricNamesOf(expr: string): string[] {
  if (expr.length > 10_000) throw new Error('an expression longer than 10000 characters')
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^{}]*\}/g, ' ')
    .replace(/\[[^[\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)/gi, ' ')
    .replace(/#[^\n]*/g, ' ')
  const names = new Set<string>()
  for (const match of bare.matchAll(/[A-Za-z_:][\w:]*(?=\s*(\(?))/g)) {
    const word = match[0]
    const before = bare[match.index - 1]
    // 1e3, 0x1f and 5m are numbers and durations, not names
    if (before !== undefined && /[\d.]/.test(before)) continue
    if (match[1] === '(' || keywords.has(word.toLowerCase())) continue
    names.add(word)
  }
  return [...names]
}

/** The metric families a Prometheus text exposition declares (its `# TYPE` lines). */
export function exposedFamilies(text: string): Map<string, string> {
  const families = new Map<string, string>()
  for (const match of text.matchAll(/^# TYPE ([A-Za-z_:][\w:]*) (\w+)$/gm)) families.set(match[1]!, match[2]!)
  return families
}

/** A metric an expression reads that no service exposes. */
export interface MissingMetric {
  file: string
  where: string
  name: string
}

/**
 * The names the expressions read that are neither exposed (a histogram's or summary's `_bucket`, `_sum` and `_count`
 * series count as its family), nor Prometheus' own `up`, nor recorded by a rule of the files.
 */
export function missingMetrics(
  expressions: Expression[],
  exposed: ReadonlyMap<string, string>,
  recorded: ReadonlySet<string> = new Set(),
): MissingMetric[] {
  const isExposed = (name: string) => {
    if (exposed.has(name)) return true
    const family = /^(.+)_(bucket|sum|count)$/.exec(name)
    const type = family ? exposed.get(family[1]!) : undefined
    if (type === 'summary') return family?.[2] !== 'bucket'
    return type === 'histogram'
  }
  return expressions.flatMap(({ file, where, expr }) =>
    metricNamesOf(expr)
      .filter((name) => !prometheusOwn.has(name) && !recorded.has(name) && !isExposed(name))
      .map((name) => ({ file, where, name })),
  )
}

/** Grafana's range variables, and any other variable (which only stands inside a matcher's string), given a value. */
export function withVariablesResolved(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}/g, '5m')
    .replace(/\$\{\w+\}|\$\w+/g, '.*')
}

/**
 * A rule file that records each dashboard expression (its variables resolved), so that `promtool check rules` parses
 * the dashboards' PromQL as it does the rules'. The record names say which panel each came from.
 */
export function dashboardsAsRules(expressions: Expression[]): string {
  const rules = expressions.map(({ file, where, expr }, index) => ({
    record: `dashboard:expression_${index}`,
    expr: withVariablesResolved(expr),
    labels: { dashboard: file.slice(file.lastIndexOf('/') + 1), panel: where },
  }))
  return stringify({ groups: [{ name: 'dashboards', rules }] })
}
