// The Docker path: the same engines from docker-compose.yml (the four, and Jaeger when asked for), for machines with a reachable Docker engine.
import { join } from 'node:path'
import { repoRoot } from './layout.ts'
import type { EngineName } from './native/engine.ts'
import { run } from './processes.ts'

const composeFile = join(repoRoot, 'docker-compose.yml')
const project = 'meridian'
const composeArgs = ['compose', '-f', composeFile, '-p', project]

let reachable: Promise<boolean> | undefined

/** True when a Docker engine answers (not merely a docker client on PATH). */
export function dockerReachable(): Promise<boolean> {
  reachable ??= run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 5000 }).then(
    (version) => version.trim().length > 0,
    () => false,
  )
  return reachable
}

export async function composeUp(components: EngineName[], progress: (m: string) => void): Promise<void> {
  progress(`docker: starting ${components.join(', ')} from ${composeFile}`)
  await run('docker', [...composeArgs, 'up', '--detach', '--wait', ...components], { showOutput: true })
}

export async function composeDown(): Promise<void> {
  // the profiles make `down` take the trace store and the mail server (started by naming them) along with the four
  await run('docker', [...composeArgs, '--profile', 'observability', '--profile', 'mail', 'down'], {
    showOutput: true,
  })
}

/** Container id of a compose service, or undefined when it is not running. */
export async function containerOf(component: EngineName): Promise<string | undefined> {
  try {
    const id = (
      await run('docker', [...composeArgs, 'ps', '--quiet', component], { timeoutMs: 10_000 })
    ).trim()
    return id ? id.slice(0, 12) : undefined
  } catch {
    return undefined
  }
}
