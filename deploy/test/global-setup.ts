// Finds helm, kubeconform, promtool and Kubernetes' schemas before any test file runs: ./scripts/prepare obtains them
// (src/prerequisites.ts declares them); a machine without them fails here, once, saying so.
import { deployTools } from '../src/tools.ts'

export default function setup(): void {
  deployTools()
}
