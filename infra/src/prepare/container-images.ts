// The images the tests' container path and the system from images are built on, made by the shell functions the
// image scripts use (infra/containers/lib.sh and engines.sh): the Node bases of Meridian's images and the engine
// images. Both are prerequisites (built once per machine), unlike the service images, which are built from the tree
// under test.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { dockerReachable } from '../docker.ts'
import { repoRoot } from '../layout.ts'
import { runLogged } from '../processes.ts'
import type { PrerequisiteStep } from './prerequisite.ts'

export type ContainerEngine = 'docker' | 'podman'

/** The engine the image scripts will use: MERIDIAN_CONTAINER_ENGINE, else Docker where one answers, else podman. */
export async function chosenContainerEngine(env: NodeJS.ProcessEnv = process.env): Promise<ContainerEngine> {
  const chosen = env.MERIDIAN_CONTAINER_ENGINE
  if (chosen === 'docker' || chosen === 'podman') return chosen
  if (chosen) throw new Error(`MERIDIAN_CONTAINER_ENGINE must be docker or podman (got '${chosen}')`)
  return (await dockerReachable()) ? 'docker' : 'podman'
}

const sources = ['scripts/lib.sh', 'infra/containers/lib.sh', 'infra/containers/engines.sh']
  .map((file) => `source ${JSON.stringify(join(repoRoot, file))}`)
  .join('; ')

/** True when the shell function (called with the engine) succeeds: the image scripts' own test of presence. */
function shellTest(call: string): boolean {
  return spawnSync('bash', ['-c', `${sources}; ${call}`], { stdio: 'ignore' }).status === 0
}

function shellRun(call: string, logFile: string): Promise<void> {
  return runLogged('bash', ['-c', `${sources}; ${call}`], { logFile, cwd: repoRoot })
}

/** The Node bases of Meridian's images: the official ones where they can be pulled, else built here. */
export function nodeBasesStep(engine: ContainerEngine): PrerequisiteStep {
  return {
    name: 'node-bases',
    title: `the Node bases of the images (${engine})`,
    purposes: ['containers'],
    needs: ['debian'],
    async present() {
      return shellTest(`node_bases_present ${engine}`) ? 'present' : undefined
    },
    async obtain({ logFile }) {
      await shellRun(`ensure_node_bases ${engine}`, logFile)
      return 'built'
    },
  }
}

/** The engines as images (PostgreSQL, Kafka, Consul, Redis) from the native path's artifacts, for podman. */
export function engineImagesStep(engine: ContainerEngine): PrerequisiteStep {
  return {
    name: 'engine-images',
    title: `the engine images (${engine})`,
    purposes: ['engine-images'],
    needs: ['debian', 'consul', 'kafka-jars'],
    async present() {
      return shellTest(`engine_images_present ${engine}`) ? 'present' : undefined
    },
    async obtain({ logFile }) {
      await shellRun(`ensure_engine_images ${engine}`, logFile)
      return 'built'
    },
  }
}
