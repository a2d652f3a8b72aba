// Gets helm, kubeconform, promtool and Kubernetes' schemas before any test file runs: built or fetched into the cache
// folder on a machine's first run (minutes, said in one line each), found there afterwards.
import { ensureDeployTools } from '../src/tools.ts'

export default async function setup(): Promise<void> {
  await ensureDeployTools((message) => process.stderr.write(`[deploy] ${message}\n`))
}
