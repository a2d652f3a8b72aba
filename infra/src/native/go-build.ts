// Tools built once from the Go module proxy through a wrapper module under infra/ whose go.sum pins every module
// (Consul, Jaeger, Toxiproxy): a binary per version in a folder of the cache, built on first use.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { run } from '../processes.ts'
import { which } from './engine.ts'

export interface GoBuild {
  /** the binary is `<binDir>/<name>-<version>` */
  name: string
  /** what messages call it (Consul, Jaeger v2.13.0, Toxiproxy) */
  title: string
  version: string
  /** the wrapper module's folder (infra/consul, …) */
  wrapperDir: string
  mainPackage: string
  ldflags?: string
  /** GOTOOLCHAIN for the build: `local` when the installed Go builds the module, `auto` when it asks for a newer one */
  toolchain: string
}

/** The version of `module` the wrapper module's go.mod requires. */
export function requiredVersion(wrapperDir: string, module: string): string {
  const escaped = module.replaceAll('.', '\\.')
  const match = new RegExp(`${escaped} (v[\\w.-]+)`).exec(readFileSync(join(wrapperDir, 'go.mod'), 'utf8'))
  if (!match?.[1]) throw new Error(`no version of ${module} required in ${wrapperDir}/go.mod`)
  return match[1]
}

/** The binary, built from the wrapper module when this version has none yet. */
export async function goBinary(
  build: GoBuild,
  binDir: string,
  progress: (m: string) => void,
): Promise<string> {
  const path = join(binDir, `${build.name}-${build.version}`)
  if (existsSync(path)) return path
  if (!which('go'))
    throw new Error(
      `${build.name}: the Go toolchain is needed once to build ${build.title}; install Go 1.21+ and retry`,
    )
  progress(
    `building ${build.title} from the Go module proxy into ${path}; first run only, takes several minutes`,
  )
  mkdirSync(binDir, { recursive: true })
  // a name of this process's own, so that two first runs at once do not write one file
  const partial = `${path}.${process.pid}.partial`
  await run(
    'go',
    [
      'build',
      '-trimpath',
      ...(build.ldflags ? ['-ldflags', build.ldflags] : []),
      '-o',
      partial,
      build.mainPackage,
    ],
    {
      cwd: build.wrapperDir,
      // go.sum in the wrapper module pins every module; nothing else is consulted
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly', GOTOOLCHAIN: build.toolchain },
      showOutput: true,
    },
  )
  renameSync(partial, path)
  return path
}
