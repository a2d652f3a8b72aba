// Meridian's Kubernetes chart (deploy/helm/meridian) as code can drive it: its tools, rendering and checks.
export {
  checkSchemas,
  customResourceKinds,
  type KubeObject,
  lintChart,
  parseManifest,
  type RenderOptions,
  renderChart,
  type SchemaCheck,
} from './chart.ts'
export {
  type Dashboard,
  dashboardExpressions,
  dashboardFiles,
  dashboardsAsRules,
  dashboardsDir,
  datasourceVariable,
  type Expression,
  exposedFamilies,
  type MissingMetric,
  metricNamesOf,
  missingMetrics,
  observabilityDir,
  panelsOf,
  prometheusConfigFile,
  readDashboard,
  ruleExpressions,
  rulesFile,
  rulesTestFile,
  withVariablesResolved,
} from './observability.ts'
export {
  type DeclaredTopic,
  drainSeconds,
  imageUid,
  podTemplateOf,
  policyFindings,
  strimziTopics,
} from './policy.ts'
export { chartDir, type DeployTools, deployDir, deployTools, kubernetesVersion } from './tools.ts'
