// Where infrastructure lives on disk: the repository (declarations) and the cache folder (binaries, data, logs).
import { mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const infraDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const repoRoot = resolve(infraDir, '..')

export interface Layout {
  /** root of everything native infrastructure keeps outside the repository */
  cacheDir: string
  /** folder of one component: binaries, data, logs, pid files */
  componentDir(name: string): string
}

export function layoutFromEnv(env: NodeJS.ProcessEnv = process.env): Layout {
  const cacheDir = resolve(
    env.MERIDIAN_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'meridian'),
  )
  return {
    cacheDir,
    componentDir(name) {
      const dir = join(cacheDir, name)
      mkdirSync(dir, { recursive: true })
      return dir
    },
  }
}
