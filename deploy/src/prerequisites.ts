// What the chart's and the alert rules' checks need before they run, declared for ./scripts/prepare (which finds this
// file by its name): helm, kubeconform and promtool from the Go module proxy, and Kubernetes' schemas from PyPI.
import { existsSync } from 'node:fs'
import { buildGoBinary, goBinaryPath, type Prerequisites } from '@meridian/infra/prepare'
import {
  fetchKubernetesSchemas,
  goToolBuild,
  goTools,
  kubernetesSchemasDir,
  kubernetesValidateWheel,
  kubernetesVersion,
} from './tools.ts'

export function prerequisites(): Prerequisites {
  return {
    debian: [],
    steps: [
      ...goTools.map((tool) => {
        const build = goToolBuild(tool)
        return {
          name: tool.name,
          title: build.title,
          purposes: ['deploy'] as const,
          heavy: true,
          async present() {
            const path = goBinaryPath(build)
            return existsSync(path) ? path : undefined
          },
          obtain: ({ logFile }: { logFile: string }) => buildGoBinary(build, logFile),
        }
      }),
      {
        name: 'kubernetes-schemas',
        title: `Kubernetes ${kubernetesVersion}'s schemas (kubernetes-validate ${kubernetesValidateWheel.version})`,
        purposes: ['deploy'],
        needs: ['debian'],
        async present() {
          const { root, target } = kubernetesSchemasDir()
          return existsSync(target) ? root : undefined
        },
        obtain: ({ logFile }) => fetchKubernetesSchemas(logFile),
      },
    ],
  }
}
