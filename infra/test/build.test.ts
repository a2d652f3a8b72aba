// ./scripts/build: order's production form is self-contained (plain node, production dependencies only, its
// migrations where the bundle looks), refuses to start on development defaults, and the simulator's is one file.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildDir } from '../src/build/targets.ts'
import { freePort } from '../src/free-port.ts'
import { endpointsOf, planInfra } from '../src/index.ts'
import { repoRoot } from '../src/layout.ts'
import { createRunDatabase, type RunDatabase } from '../src/system/databases.ts'
import { scaledMs } from '../src/test-time.ts'

const orderDir = join(buildDir, 'order')
const simulatorDir = join(buildDir, 'payment-simulator')

/** ./scripts/build with the names given; what it wrote to stderr. */
function build(...names: string[]): string {
  const result = spawnSync(join(repoRoot, 'scripts', 'build'), names, { cwd: repoRoot, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`./scripts/build ${names.join(' ')}: ${result.stderr}`)
  return result.stderr
}

/** `node <entry>` in the build with only the variables given (and PATH); status and everything it wrote. */
function runBuilt(dir: string, entry: string, env: Record<string, string>) {
  const result = spawnSync(process.execPath, [entry], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: scaledMs(60_000),
  })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
}

describe('./scripts/build order', () => {
  beforeAll(() => {
    build('order')
  }, scaledMs(180_000))

  it("when order is built, then build/order has its package.json, dist/main.js and dist/migrate.js with maps, and its and the event tables' migrations", () => {
    const manifest = JSON.parse(readFileSync(join(orderDir, 'package.json'), 'utf8')) as {
      type: string
      scripts: Record<string, string>
      dependencies: Record<string, string>
      devDependencies?: unknown
    }
    expect(manifest.type).toBe('module')
    expect(manifest.scripts.start).toBe('node --max-semi-space-size=8 dist/main.js')
    expect(manifest.devDependencies).toBeUndefined()
    expect(Object.keys(manifest.dependencies)).toContain('fastify')
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@meridian/'))).toEqual([])
    for (const file of [
      'dist/main.js',
      'dist/main.bundle.js.map',
      'dist/migrate.js',
      'dist/migrate.bundle.js.map',
    ]) {
      expect(existsSync(join(orderDir, file)), file).toBe(true)
    }
    // every migration of the sources, and nothing else: the build's copies are the ones migrate.js runs
    const sqlFilesOf = (dir: string) =>
      readdirSync(dir)
        .filter((name) => name.endsWith('.sql'))
        .sort()
    for (const dir of ['services/order/migrations', 'packages/events/migrations']) {
      expect(sqlFilesOf(join(repoRoot, dir)).length, dir).toBeGreaterThan(1)
      expect(filesUnder(join(orderDir, dir)).sort(), dir).toEqual(sqlFilesOf(join(repoRoot, dir)))
    }
    expect(filesUnder(join(orderDir, 'packages/events/migrations'))).toContain('0001_outbox.sql')
  })

  it('when order is built, then nothing in it is TypeScript, a development tool or a workspace package', () => {
    const installed = readdirSync(join(orderDir, 'node_modules'))
    for (const tool of ['tsx', 'typescript', 'vitest', 'esbuild', 'vite', '@meridian', '@types']) {
      expect(installed, tool).not.toContain(tool)
    }
    expect(filesUnder(join(orderDir, 'dist')).filter((file) => /\.[cm]?ts$/.test(file))).toEqual([])
    expect(
      filesUnder(orderDir).filter((file) => /\.[cm]?ts$/.test(file) && !file.includes('node_modules')),
    ).toEqual([])
    // the order's own code is bundled: no import of a workspace package is left for node to resolve
    for (const file of filesUnder(join(orderDir, 'dist')).filter((name) => name.endsWith('.js'))) {
      expect(readFileSync(join(orderDir, 'dist', file), 'utf8'), file).not.toMatch(/from ["']@meridian\//)
    }
  })

  it('when dist/main.js starts with NODE_ENV=production and no production variables, then it exits non-zero naming each refused one', () => {
    const { status, output } = runBuilt(orderDir, 'dist/main.js', { NODE_ENV: 'production' })
    expect(status).not.toBe(0)
    expect(output).toContain('DATABASE_URL: must be set in production (its default is for development only)')
    expect(output).toContain(
      'SERVICE_CREDENTIAL: must be set in production (its default is for development only)',
    )
    expect(output).toContain(
      'IDEMPOTENCY_SECRET: must be set in production (its default is for development only)',
    )
    // and the engines it would reach in plaintext (the development defaults' addresses), with the way out
    expect(output).toContain('REDIS_URL: redis:// is plaintext')
    expect(output).toContain('ENGINES_PLAINTEXT_ALLOWED=true allows them')
    // the message names the variables and never shows the development values
    expect(output).not.toContain('postgres://postgres:postgres@')
  })

  it('when dist/migrate.js fails, then its stack trace names the TypeScript source lines (source maps are on)', () => {
    const { status, output } = runBuilt(orderDir, 'dist/migrate.js', { NODE_ENV: 'production' })
    expect(status).not.toBe(0)
    expect(output).toMatch(/packages\/service-kit\/src\/config\.ts:\d+:\d+/)
  })

  it("when dist/main.js loads, then the kit's tracing preload comes first: with an OTLP endpoint ioredis and http are patched as they load, without one nothing is", () => {
    const launcher = readFileSync(join(orderDir, 'dist/main.js'), 'utf8')
    expect(launcher.indexOf("import('./tracing.bundle.js')")).toBeGreaterThan(-1)
    expect(launcher.indexOf("import('./tracing.bundle.js')")).toBeLessThan(
      launcher.indexOf("import('./main.bundle.js')"),
    )
    // what the launcher does, then the modules the service would load next
    const probe = `await import('./dist/tracing.bundle.js')
const { Redis } = await import('ioredis')
const http = (await import('node:http')).default
console.log(JSON.stringify({
  tracing: globalThis[Symbol.for('meridian.tracing')] !== undefined,
  ioredis: Redis.prototype.sendCommand.__wrapped === true,
  http: http.request.__wrapped === true || http.Server.prototype.emit.__wrapped === true,
}))`
    const state = (env: Record<string, string>) => {
      const result = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
        cwd: orderDir,
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
        timeout: scaledMs(60_000),
      })
      expect(result.status, result.stderr).toBe(0)
      return JSON.parse(result.stdout.trim()) as Record<string, boolean>
    }
    expect(state({})).toEqual({ tracing: false, ioredis: false, http: false })
    expect(state({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toEqual({
      tracing: true,
      ioredis: true,
      http: true,
    })
  })

  it('when the inputs are unchanged, then building again keeps build/order', () => {
    expect(build('order')).toContain('order: up to date (build/order)')
  })

  it('when build/order is gone (a new clone), then the build of the same inputs is taken from the cache folder, whole', () => {
    const before = filesUnder(orderDir).sort()
    rmSync(orderDir, { recursive: true })
    expect(build('order')).toContain('order: built before from the same inputs, taken from the cache folder')
    expect(filesUnder(orderDir).sort()).toEqual(before)
  })

  describe('on an empty database', () => {
    let database: RunDatabase | undefined

    afterAll(async () => {
      await database?.drop()
    })

    it('when dist/migrate.js runs, then the order tables and the outbox and inbox exist, and a second run changes nothing', async () => {
      const { databaseUrl } = endpointsOf(await planInfra())
      database = await createRunDatabase(databaseUrl, `build_order_${Date.now().toString(36)}`)
      const env = {
        NODE_ENV: 'production',
        // the test's PostgreSQL is the development engine, plaintext on this machine's loopback
        ENGINES_PLAINTEXT_ALLOWED: 'true',
        DATABASE_URL: database.url,
        SERVICE_CREDENTIAL: 'x'.repeat(32),
        IDEMPOTENCY_SECRET: 'y'.repeat(32),
      }
      const first = runBuilt(orderDir, 'dist/migrate.js', env)
      expect(first.status, first.output).toBe(0)
      const sql = postgres(database.url, { max: 1, onnotice: () => {} })
      try {
        const tables = await sql<{ name: string }[]>`
          select table_name as name from information_schema.tables where table_schema = 'public' order by 1`
        expect(tables.map((row) => row.name)).toEqual(
          expect.arrayContaining(['orders', 'order_items', 'sagas', 'saga_steps', 'outbox', 'inbox']),
        )
        const applied = async () =>
          (await sql<{ count: number }[]>`select count(*)::int as count from schema_migrations`)[0]?.count
        // every numbered migration of the service's folder, each once
        const migrations = readdirSync(join(repoRoot, 'services', 'order', 'migrations')).filter((name) =>
          /^\d+_.*\.sql$/.test(name),
        )
        expect(await applied()).toBe(migrations.length)
        const second = runBuilt(orderDir, 'dist/migrate.js', env)
        expect(second.status, second.output).toBe(0)
        expect(await applied()).toBe(migrations.length)
      } finally {
        await sql.end({ timeout: 2 })
      }
    })
  })
})

describe('./scripts/build payment-simulator', () => {
  let child: ChildProcess | undefined

  beforeAll(() => {
    build('payment-simulator')
  }, scaledMs(120_000))

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    child = undefined
  })

  it('when built, then it is one bundle without node_modules that answers on PORT and stops on SIGTERM', async () => {
    expect(existsSync(join(simulatorDir, 'node_modules'))).toBe(false)
    expect(filesUnder(join(simulatorDir, 'dist')).sort()).toEqual([
      'main.bundle.js',
      'main.bundle.js.map',
      'main.js',
    ])
    const port = await freePort()
    const started = spawn(process.execPath, ['dist/main.js'], {
      cwd: simulatorDir,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    child = started
    let stderr = ''
    await new Promise<void>((resolve, reject) => {
      started.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        if (stderr.includes('listening on')) resolve()
      })
      started.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)))
    })
    const reply = await fetch(`http://127.0.0.1:${port}/v1/payment_methods`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_test_build' },
      body: new URLSearchParams({
        type: 'card',
        'card[number]': '4242424242424242',
        'card[exp_month]': '1',
        'card[exp_year]': '2040',
        'card[cvc]': '123',
      }),
    })
    expect(reply.status).toBe(200)
    const exited = once(started, 'exit')
    started.kill('SIGTERM')
    const [code] = await exited
    expect(code).toBe(0)
  })
})
