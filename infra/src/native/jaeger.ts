// Jaeger (the v2 binary) built once from the Go module proxy (wrapper module infra/jaeger) and run on loopback with
// in-memory storage: the development system's trace store, an optional engine (started by `scripts/infra up`, not by
// the test setup).
import { createHash } from 'node:crypto'
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { infraDir, type Layout } from '../layout.ts'
import { startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile } from './engine.ts'
import { builtGoBinary, type GoBuild } from './go-build.ts'

const OTLP_GRPC_PORT = 4317
const OTLP_HTTP_PORT = 4318
const QUERY_GRPC_PORT = 16685
const QUERY_HTTP_PORT = 16686
/** Where services send their spans (OTLP over HTTP; the SDK appends /v1/traces). */
export const nativeOtlpEndpoint = `http://127.0.0.1:${OTLP_HTTP_PORT}`
/** Jaeger's UI and its query API (/api/services, /api/traces). */
export const nativeJaegerUiUrl = `http://127.0.0.1:${QUERY_HTTP_PORT}`

const wrapperDir = join(infraDir, 'jaeger')
/** The collector configuration both the native process and the container run (infra/jaeger/config.yaml). */
export const jaegerConfigFile = join(wrapperDir, 'config.yaml')
/**
 * Meridian's trace view (index.html, static/): what the native Jaeger serves at its UI address, since a Jaeger built
 * from the Go module proxy embeds only a placeholder page (jaeger-ui is baked in by Jaeger's release builds alone).
 */
export const jaegerUiAssetsDir = join(wrapperDir, 'ui')

/**
 * The module version infra/jaeger pins, and the Jaeger v2 release it carries (its go.mod names both): Jaeger tags each
 * release twice on one commit (v1.76.0 / v2.13.0), the v1 tag being the Go module's version and the v2 one the
 * binary's and the image's.
 */
export function pinnedJaegerVersion(): { module: string; release: string } {
  const goMod = readFileSync(join(wrapperDir, 'go.mod'), 'utf8')
  const module = /github\.com\/jaegertracing\/jaeger (v1\.[\d.]+)/.exec(goMod)?.[1]
  const release = /jaeger-release (v2\.[\d.]+)/.exec(goMod)?.[1]
  if (!module || !release)
    throw new Error(
      `jaeger: ${wrapperDir}/go.mod must require github.com/jaegertracing/jaeger and name its jaeger-release`,
    )
  return { module, release }
}

/** How Jaeger is built from infra/jaeger, once per version, into the component's `bin`. */
export function jaegerBuild(layout: Layout): GoBuild {
  const { module, release } = pinnedJaegerVersion()
  return {
    name: 'jaeger',
    title: `Jaeger ${release} (module ${module})`,
    version: module,
    wrapperDir,
    mainPackage: 'github.com/jaegertracing/jaeger/cmd/jaeger',
    // what `jaeger version` and the logs report; Jaeger's own build sets it the same way
    ldflags: `-X github.com/jaegertracing/jaeger/internal/version.latestVersion=${release}`,
    // Jaeger's module asks for Go 1.24.6, which Go 1.21+ fetches by itself (as deploy/tools does), also where the
    // system's go.env says local
    toolchain: process.env.GOTOOLCHAIN ?? 'auto',
    binDir: join(layout.componentDir('jaeger'), 'bin'),
  }
}

/** The Jaeger binary the preparation built; MissingPrerequisite before that. */
export const jaegerBinary = (layout: Layout): string => builtGoBinary(jaegerBuild(layout))

/** Jaeger's query API answers (it lists the services it holds traces of): the probe of a Jaeger started here. */
export async function jaegerVersion(uiUrl: string): Promise<string> {
  const response = await fetch(`${uiUrl}/api/services`, { signal: AbortSignal.timeout(3000) })
  if (!response.ok) throw new Error(`jaeger at ${uiUrl}: /api/services answered ${response.status}`)
  await response.body?.cancel()
  return `Jaeger ${pinnedJaegerVersion().release}`
}

/** The address without its trailing slashes (a loop: `/\/+$/` backtracks on a long run of slashes inside it). */
function withoutTrailingSlashes(url: string): string {
  let end = url.length
  while (end > 0 && url[end - 1] === '/') end -= 1
  return url.slice(0, end)
}

/**
 * An OTLP/HTTP receiver accepts an empty export (any collector, Jaeger or not): the probe of an endpoint given by
 * OTEL_EXPORTER_OTLP_ENDPOINT, whose query side (if any) is not ours to know.
 */
export async function otlpReceiverVersion(endpoint: string): Promise<string> {
  const url = `${withoutTrailingSlashes(endpoint)}/v1/traces`
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"resourceSpans":[]}',
    signal: AbortSignal.timeout(3000),
  })
  await response.body?.cancel()
  if (!response.ok) throw new Error(`OTLP receiver at ${url} answered ${response.status}`)
  return 'OTLP/HTTP receiver'
}

/** Every file under a folder, by path relative to it, in a stable order. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort()
}

/** What a Jaeger started from this checkout runs with: its configuration and trace view, as one digest. */
export function jaegerInputsDigest(): string {
  const hash = createHash('sha256').update(readFileSync(jaegerConfigFile))
  for (const file of filesUnder(jaegerUiAssetsDir)) {
    hash.update(`\0${file}\0`).update(readFileSync(join(jaegerUiAssetsDir, file)))
  }
  return hash.digest('hex')
}

export function nativeJaeger(layout: Layout): NativeEngine {
  const home = layout.componentDir('jaeger')
  const logFile = join(home, 'jaeger.log')
  const pidFile = new PidFile(home)
  // the copies it runs with: a Jaeger shared by every checkout on the machine reads its trace view's files while it
  // serves, so they are the developer cache's, not those of the checkout that happened to start it (removing that
  // checkout left the next run's trace-view tests a page of 404s)
  const uiCopy = join(home, 'ui')
  const configCopy = join(home, 'config.yaml')
  const digestFile = join(home, 'inputs.sha256')

  return {
    name: 'jaeger',
    ports: [OTLP_GRPC_PORT, OTLP_HTTP_PORT, QUERY_GRPC_PORT, QUERY_HTTP_PORT],
    endpoint: nativeOtlpEndpoint,
    logFile,
    startTimeoutMs: 30_000,
    runningPid: () => pidFile.live(),
    probe: () => jaegerVersion(nativeJaegerUiUrl),

    stale() {
      const started = existsSync(digestFile) ? readFileSync(digestFile, 'utf8').trim() : ''
      return started === jaegerInputsDigest()
        ? undefined
        : "started with another checkout's configuration or trace view"
    },

    async start() {
      const path = jaegerBinary(layout)
      const digest = jaegerInputsDigest()
      rmSync(uiCopy, { recursive: true, force: true })
      cpSync(jaegerUiAssetsDir, uiCopy, { recursive: true })
      cpSync(jaegerConfigFile, configCopy)
      writeFileSync(digestFile, `${digest}\n`)
      const pid = startDaemon({
        command: path,
        args: ['--config', configCopy],
        logFile,
        cwd: home,
        // the configuration's listen host: loopback unless said otherwise (only the container says otherwise); the UI
        // assets by absolute path, so config.yaml names no folder of this checkout
        env: { ...process.env, JAEGER_LISTEN_HOST: '127.0.0.1', JAEGER_UI_ASSETS: uiCopy },
      })
      pidFile.write(pid)
      return pid
    },

    stop: () => pidFile.stop('SIGTERM', 10_000),
  }
}
