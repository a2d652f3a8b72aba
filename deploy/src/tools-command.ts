// `pnpm --filter @meridian/deploy tools`: obtains helm, kubeconform, promtool and the schemas, and prints where they are.
import { ensureDeployTools } from './tools.ts'

const tools = await ensureDeployTools((message) => process.stderr.write(`[deploy] ${message}\n`))
process.stdout.write(
  `helm=${tools.helm}\nkubeconform=${tools.kubeconform}\npromtool=${tools.promtool}\nschema-location=${tools.schemaLocation}\nkubernetes-version=${tools.kubernetesVersion}\n`,
)
