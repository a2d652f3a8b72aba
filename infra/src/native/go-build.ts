// Tools built once from the Go module proxy through a wrapper module whose go.sum pins every module (Consul, Jaeger
// and Toxiproxy under infra/; helm, kubeconform and promtool under deploy/tools): a binary per version in a folder of
// the cache. The preparation (./scripts/prepare) builds them; everything else only finds them.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { runLogged } from '../processes.ts'
import { which } from './engine.ts'

export interface GoBuild {
  /** the binary is `<binDir>/<name>-<version>` */
  name: string
  /** what messages call it (Consul v1.16.3, Jaeger v2.13.0, Toxiproxy v2.12.0) */
  title: string
  version: string
  /** the wrapper module's folder (infra/consul, …) */
  wrapperDir: string
  mainPackage: string
  ldflags?: string
  /** build tags (what a module lets a build leave out) */
  tags?: readonly string[]
  /** GOTOOLCHAIN for the build: `local` when the installed Go builds the module, `auto` when it asks for a newer one */
  toolchain: string
  /** where the binary goes */
  binDir: string
}

/** The version of `module` the wrapper module's go.mod requires. */
export function requiredVersion(wrapperDir: string, module: string): string {
  const escaped = module.replaceAll('.', '\\.')
  const match = new RegExp(`${escaped} (v[\\w.-]+)`).exec(readFileSync(join(wrapperDir, 'go.mod'), 'utf8'))
  if (!match?.[1]) throw new Error(`no version of ${module} required in ${wrapperDir}/go.mod`)
  return match[1]
}

/** Where the binary of this build is, built or not. */
export const goBinaryPath = (build: GoBuild): string => join(build.binDir, `${build.name}-${build.version}`)

/** The binary of this build; MissingPrerequisite when it was never built here. */
export function builtGoBinary(build: GoBuild): string {
  const path = goBinaryPath(build)
  if (!existsSync(path)) throw new MissingPrerequisite(build.title, 'builds it once from the Go module proxy')
  return path
}

/** Builds the binary (the go command's output into `logFile`), unless it is there already. */
export async function buildGoBinary(build: GoBuild, logFile: string): Promise<string> {
  const path = goBinaryPath(build)
  if (existsSync(path)) return path
  if (!which('go'))
    throw new Error(
      `${build.name}: the Go toolchain is needed once to build ${build.title}; install Go 1.21+ and retry`,
    )
  mkdirSync(build.binDir, { recursive: true })
  // a name of this process's own, so that two first runs at once do not write one file
  const partial = `${path}.${process.pid}.partial`
  await runLogged(
    'go',
    [
      'build',
      '-trimpath',
      '-buildvcs=false',
      ...(build.tags?.length ? ['-tags', build.tags.join(',')] : []),
      // no symbol table or debug information: nobody debugs these here, and the link is quicker without them
      '-ldflags',
      ['-s -w', build.ldflags].filter(Boolean).join(' '),
      '-o',
      partial,
      build.mainPackage,
    ],
    {
      cwd: build.wrapperDir,
      // go.sum in the wrapper module pins every module; nothing else is consulted
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly', GOTOOLCHAIN: build.toolchain },
      logFile,
      timeoutMs: 40 * 60_000,
    },
  )
  renameSync(partial, path)
  return path
}
