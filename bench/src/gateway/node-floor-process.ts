// The `node floor` target (node-floor.ts) in a process of its own, in front of the run's auth.
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type StartedProcess, startAnswering } from './child-process.ts'

export const nodeFloorMain = fileURLToPath(new URL('./node-floor.ts', import.meta.url))

export interface NodeFloorOptions {
  port: number
  /** the run's auth: http://127.0.0.1:<port> */
  upstreamUrl: string
  /** polled through the floor until it answers 200 */
  readyPath: string
  /** BENCH_CPU_PROFILE: the process writes a V8 CPU profile there when it exits (its pid in the file name) */
  cpuProfileDir: string | undefined
  inheritedEnv: NodeJS.ProcessEnv
}

export function startNodeFloor(options: NodeFloorOptions): Promise<StartedProcess> {
  return startAnswering(
    {
      name: 'node floor',
      command: process.execPath,
      args: [
        '--import',
        import.meta.resolve('tsx'),
        ...(options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : []),
        nodeFloorMain,
      ],
      cwd: dirname(nodeFloorMain),
      env: {
        ...options.inheritedEnv,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(options.port),
        UPSTREAM_URL: options.upstreamUrl,
      },
    },
    `http://127.0.0.1:${options.port}${options.readyPath}`,
    15_000,
  )
}
