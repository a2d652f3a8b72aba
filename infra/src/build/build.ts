// The production form of one service: build/<name>/ with package.json, dist/ (the service's code and the workspace
// packages it uses, bundled by esbuild; third-party packages left to node_modules) and the production node_modules
// that `pnpm deploy --prod` installs from the lockfile. Plain `node dist/main.js` runs it; nothing outside is read.
//
// Why a bundle of the workspace code and not the deployed workspace packages: those export their TypeScript sources
// (package.json "exports" → src/index.ts, for tsx, vitest and tsc), so running them would need TypeScript at run
// time or a second, compiled set of exports to keep in step. The bundle compiles every workspace file a service
// reaches into dist/, once, while third-party packages stay as their authors ship them (native addons such as
// argon2, packages that find their own files such as swagger-ui's, and the kafkajs patch all keep working).
import { spawn } from 'node:child_process'
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { build, type Metafile, type Plugin } from 'esbuild'
import { repoRoot } from '../layout.ts'
import { checkInputsCovered, inputsDigest } from './inputs.ts'
import { keepBuild, restoreKeptBuild } from './kept-builds.ts'
import { type BuildTarget, buildDir, productionNodeFlags } from './targets.ts'

export interface BuildResult {
  name: string
  dir: string
  /** false: build/<name> was already built from the same inputs and is kept */
  built: boolean
}

export interface BuildOptions {
  /** rebuild even when the inputs are unchanged */
  force?: boolean
  log?: (line: string) => void
}

const stampFile = '.build-inputs'

/** Builds build/<target.name>/ unless it is already built from the same inputs. */
export async function buildTarget(target: BuildTarget, options: BuildOptions = {}): Promise<BuildResult> {
  const log = options.log ?? (() => {})
  const dir = join(buildDir, target.name)
  const inputs = inputsDigest(target)
  if (!options.force && readIfExists(join(dir, stampFile)) === inputs) {
    log(`${target.name}: up to date (build/${target.name})`)
    return { name: target.name, dir, built: false }
  }
  if (!options.force && restoreKeptBuild(target.name, inputs, dir, stampFile)) {
    log(
      `${target.name}: built before from the same inputs, taken from the cache folder (build/${target.name})`,
    )
    return { name: target.name, dir, built: false }
  }
  const staging = join(buildDir, `.${target.name}.staging`)
  rmSync(staging, { recursive: true, force: true })
  try {
    const dependencies = target.workspacePackage
      ? await deployProduction(target.workspacePackage, staging, log)
      : {}
    log(`${target.name}: bundling ${Object.values(target.entries).join(', ')}`)
    const { metafile, assets } = await bundle(target, join(staging, 'dist'))
    checkInputsCovered(target, metafile, assets)
    for (const asset of assets) copyAsset(asset, staging)
    checkExternalsInstalled(target.name, metafile, staging)
    if (target.withConsole) await buildConsole(join(staging, 'console'), log)
    writePackageJson(target, staging, dependencies)
    writeFileSync(join(staging, stampFile), inputs)
    rmSync(dir, { recursive: true, force: true })
    renameSync(staging, dir)
  } catch (error) {
    rmSync(staging, { recursive: true, force: true })
    throw error
  }
  keepBuild(target.name, inputs, dir)
  log(`${target.name}: built build/${target.name}`)
  return { name: target.name, dir, built: true }
}

/**
 * `pnpm deploy --prod` of the service's workspace package into <staging>/.deploy (hoisted: one plain node_modules,
 * no symlinks into a store), its node_modules moved to <staging>/node_modules without the workspace packages (they
 * are in the bundle) and without what nothing runs (type declarations, readmes). Returns the third-party
 * dependencies of the package with the versions the lockfile pinned.
 */
async function deployProduction(
  workspacePackage: string,
  staging: string,
  log: (line: string) => void,
): Promise<Record<string, string>> {
  const deployDir = join(staging, '.deploy')
  log(`${workspacePackage}: pnpm deploy --prod (production dependencies from the lockfile)`)
  await run(
    'pnpm',
    [
      '--filter',
      workspacePackage,
      'deploy',
      '--prod',
      '--prefer-offline',
      // pnpm 10 deploys from the shared lockfile only with injected workspace packages
      '--config.inject-workspace-packages=true',
      '--config.node-linker=hoisted',
      deployDir,
    ],
    repoRoot,
  )
  const nodeModules = join(staging, 'node_modules')
  renameSync(join(deployDir, 'node_modules'), nodeModules)
  const manifest = JSON.parse(readFileSync(join(deployDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
  }
  rmSync(deployDir, { recursive: true, force: true })
  for (const entry of ['@meridian', '.bin', '.modules.yaml', '.pnpm', '.pnpm-workspace-state-v1.json']) {
    rmSync(join(nodeModules, entry), { recursive: true, force: true })
  }
  pruneNodeModules(nodeModules)
  return Object.fromEntries(
    Object.entries(manifest.dependencies ?? {})
      .filter(([name]) => !name.startsWith('@meridian/'))
      // the deployed manifest writes a version with its peers, `6.3.0(ajv@8.20.0)`: the version is the first part
      .map(([name, version]) => [name, version.split('(')[0]!]),
  )
}

// What no running process reads: type declarations, source maps (the services' own dist/ maps are the ones turned on,
// after the third-party modules have loaded) and documentation (licences stay), and a package's own tests, examples,
// benchmarks and docs folders at its root.
const unused = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$/i
const kept = /^licen[cs]e/i
const unusedFolders = new Set([
  'test',
  'tests',
  '__tests__',
  'example',
  'examples',
  'benchmark',
  'benchmarks',
  'bench',
  'docs',
  'coverage',
  '.github',
])

function pruneNodeModules(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name.startsWith('@')) pruneNodeModules(path)
      else prunePackage(path)
    }
  }
}

function prunePackage(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && unusedFolders.has(entry.name))
      rmSync(join(dir, entry.name), { recursive: true })
  }
  pruneFiles(dir)
}

function pruneFiles(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      // a package's own node_modules holds packages: each pruned as one
      if (entry.name === 'node_modules') pruneNodeModules(path)
      else pruneFiles(path)
    } else if (entry.isFile() && unused.test(entry.name) && !kept.test(entry.name)) rmSync(path)
  }
}

/**
 * esbuild: the entries and every workspace file they reach into <outdir> as ES modules, shared code in chunk files
 * beside them (so that every output is one level below build/<name>), with linked source maps; then a launcher per
 * entry. Every bare import that is not a workspace package stays an import, resolved at run time from node_modules.
 */
async function bundle(
  target: BuildTarget,
  outdir: string,
): Promise<{ metafile: Metafile; assets: string[] }> {
  const assets = new Set<string>()
  const result = await build({
    entryPoints: Object.fromEntries([
      ...Object.entries(target.entries).map(([name, entry]) => [`${name}.bundle`, join(repoRoot, entry)]),
      ...(target.preload ? [['tracing.bundle', join(repoRoot, target.preload)]] : []),
    ]),
    outdir,
    // the metafile names its inputs from here (checkInputsCovered)
    absWorkingDir: repoRoot,
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: 'linked',
    // the maps name the sources; the sources themselves are not shipped
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [workspaceOnly(), fileLocations(assets)],
  })
  for (const name of Object.keys(target.entries)) {
    writeFileSync(join(outdir, `${name}.js`), launcher(name, name === 'main' && target.preload !== undefined))
  }
  return { metafile: result.metafile, assets: [...assets] }
}

/**
 * dist/<name>.js turns source maps on and then loads dist/<name>.bundle.js: node reads a module's map when it loads
 * it, so the switch must come before the bundle's first import. A service's main.js loads the kit's tracing preload
 * between the two, for the same reason: the instrumentations patch modules as they load. A stack trace names the .ts lines however node is
 * started (`node --enable-source-maps` does the same).
 */
function launcher(name: string, withTracing: boolean): string {
  const tracing = withTracing
    ? `// tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before the modules it instruments load
await import('./tracing.bundle.js')
`
    : ''
  return `// ${name}: source maps on (stack traces name the .ts lines), then the bundle (./scripts/build)
process.setSourceMapsEnabled(true)
${tracing}await import('./${name}.bundle.js')
`
}

function workspaceOnly(): Plugin {
  return {
    name: 'meridian-workspace-only',
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('@meridian/')) return undefined
        return { path: args.path, external: true }
      })
    },
  }
}

const urlOfFile = /new URL\(\s*'([^']+)'\s*,\s*import\.meta\.url\s*\)/g

/**
 * A workspace file that finds a file of its own (`new URL('../migrations', import.meta.url)`: a service's and the
 * event tables' migrations) would, bundled, look beside dist/main.js, where two of them would meet. Each such
 * `import.meta.url` becomes the file's place in a copy of the repository's layout under build/<name>/
 * (packages/events/src/event-tables.ts → build/<name>/packages/events/src/…), and what it points at is copied there.
 * Any other use of import.meta.url in workspace code stops the build: it would point somewhere unshipped.
 */
function fileLocations(assets: Set<string>): Plugin {
  return {
    name: 'meridian-file-locations',
    setup(builder) {
      builder.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`) || !args.path.startsWith(repoRoot + sep))
          return undefined
        const source = readFileSync(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return undefined
        const fromRoot = relative(repoRoot, args.path)
        const rest = source.replace(urlOfFile, '')
        if (rest.includes('import.meta.url')) {
          throw new Error(`${fromRoot}: import.meta.url outside new URL('<relative path>', import.meta.url)`)
        }
        for (const match of source.matchAll(urlOfFile)) assets.add(resolve(dirname(args.path), match[1]!))
        // every output file (dist/main.js, dist/migrate.js, the shared chunks) is one level below build/<name>
        const contents = source.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(`../${fromRoot}`)}, import.meta.url).href`,
        )
        return { contents, loader: 'ts' }
      })
    },
  }
}

/** Copies a folder a workspace file points at to the same place under the build, without its readme. */
function copyAsset(asset: string, staging: string): void {
  const fromRoot = relative(repoRoot, asset)
  if (fromRoot.startsWith('..') || !existsSync(asset))
    throw new Error(`${asset}: not a file of the repository`)
  cpSync(asset, join(staging, fromRoot), {
    recursive: true,
    filter: (source) => statSync(source).isDirectory() || !/\.(md|ts)$/.test(source),
  })
}

/** Every third-party package the bundle imports is in node_modules (a missing one would fail only when reached). */
function checkExternalsInstalled(name: string, metafile: Metafile, staging: string): void {
  const builtins = new Set(builtinModules)
  const missing = new Set<string>()
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) {
      if (!imported.external) continue
      const path = imported.path.replace(/^node:/, '')
      if (builtins.has(path) || builtins.has(path.split('/')[0]!)) continue
      const parts = imported.path.split('/')
      const packageName = imported.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
      if (!existsSync(join(staging, 'node_modules', packageName, 'package.json'))) missing.add(packageName)
    }
  }
  if (missing.size > 0) {
    throw new Error(`${name}: imports ${[...missing].join(', ')}, not among its production dependencies`)
  }
}

async function buildConsole(outDir: string, log: (line: string) => void): Promise<void> {
  log('gateway: building the console (apps/console) into build/gateway/console')
  const consoleDir = join(repoRoot, 'apps', 'console')
  await run(
    join(consoleDir, 'node_modules', '.bin', 'vite'),
    ['build', '--logLevel', 'warn', '--emptyOutDir', '--outDir', outDir],
    consoleDir,
  )
}

/** The payment simulator's version (it has no workspace package.json to read): the platform's, set by ./scripts/release. */
const simulatorVersion = '0.2.0-dev'

function writePackageJson(target: BuildTarget, staging: string, dependencies: Record<string, string>): void {
  const source = target.workspacePackage
    ? (JSON.parse(readFileSync(join(repoRoot, 'services', target.name, 'package.json'), 'utf8')) as {
        name: string
        version: string
        description: string
      })
    : {
        name: `@meridian/${target.name}`,
        version: simulatorVersion,
        description: 'The payment provider simulator.',
      }
  const scripts: Record<string, string> = {
    start: ['node', ...productionNodeFlags, 'dist/main.js'].join(' '),
  }
  if (target.entries.migrate) scripts.migrate = 'node dist/migrate.js'
  const manifest = {
    name: source.name,
    version: source.version,
    private: true,
    type: 'module',
    description: source.description,
    scripts,
    dependencies,
  }
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined
}

/** Runs a command to its end (without blocking: builds run side by side), its output the builder's own. */
function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] })
    child.once('error', (error) => reject(new Error(`${command}: ${error.message}`)))
    child.once('exit', (status, signal) => {
      if (status === 0) resolve()
      else reject(new Error(`${command} ${args.join(' ')} exited with ${status ?? signal}`))
    })
  })
}
