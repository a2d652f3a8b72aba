// `pnpm --filter @meridian/deploy tools`: prints where helm, kubeconform, promtool and the schemas are (./scripts/prepare
// obtains them).
import { deployTools } from './tools.ts'

const tools = deployTools()
process.stdout.write(
  `helm=${tools.helm}\nkubeconform=${tools.kubeconform}\npromtool=${tools.promtool}\nschema-location=${tools.schemaLocation}\nkubernetes-version=${tools.kubernetesVersion}\n`,
)
