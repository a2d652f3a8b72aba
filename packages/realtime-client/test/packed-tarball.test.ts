// The SDK as a team outside the monorepo gets it: `pnpm pack` makes the tarball, and projects in the system's temporary
// folder install it with npm (its dependencies from the npm registry), then use it against a real Socket.IO server.
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RealtimeServer, scaledMs, startRealtimeServer } from './realtime-server.ts'

const run = promisify(execFile)
const packageDir = join(import.meta.dirname, '..')
const fixtures = join(import.meta.dirname, 'outside-project')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

/** Runs a command, failing with its output (npm's and tsc's explanations are on stdout and stderr). */
async function sh(
  command: string,
  args: string[],
  cwd: string,
  timeout = scaledMs(120_000),
): Promise<string> {
  try {
    return (await run(command, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024 })).stdout
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`, {
      cause: error,
    })
  }
}

/** Copies a fixture project to `root` and installs the tarball in it with npm. */
async function outsideProject(root: string, fixture: string, tarball: string): Promise<string> {
  const dir = join(root, fixture)
  await cp(join(fixtures, fixture), dir, { recursive: true })
  await sh(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball],
    dir,
  )
  return dir
}

/** The server side of the fixture's conversation: welcome, an echo, a refused join, and a broadcast. */
function converse(server: RealtimeServer): void {
  server.io.on('connection', (socket) => {
    socket.emit('welcome', {
      type: 'welcome',
      message: `hello ${socket.handshake.auth.token}`,
      socketId: socket.id,
    })
    socket.on('echo', (payload, ack) => {
      ack({ ok: true, echo: { type: 'echo', payload } })
      server.io.emit('new_message', {
        id: 'm-1',
        userId: 'u-1',
        username: 'ada',
        text: 'hi all',
        createdAt: '',
      })
    })
    socket.on('join', (_join, ack) =>
      ack({ ok: false, error: { code: 'FORBIDDEN', message: 'Not allowed' } }),
    )
  })
}

// each step runs a process (node, tsc, vite) that a loaded machine may slow well past vitest's default 5 s
describe('the packed SDK, outside the workspace', { timeout: scaledMs(90_000) }, () => {
  let root: string
  let nodeApp: string
  let vitePage: string
  let server: RealtimeServer

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'meridian-sdk-'))
    await sh('pnpm', ['pack', '--pack-destination', root], packageDir)
    const tarball = join(root, (await readdir(root)).find((file) => file.endsWith('.tgz'))!)
    ;[nodeApp, vitePage] = await Promise.all([
      outsideProject(root, 'node-app', tarball),
      outsideProject(root, 'vite-page', tarball),
    ])
    // connection-state recovery on, as the realtime-gateway has it: broadcasts then carry an offset
    server = await startRealtimeServer({ connectionStateRecovery: {} })
    converse(server)
  }, scaledMs(240_000))

  afterAll(async () => {
    await server?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('when the tarball is installed, then it holds built JavaScript and types, and no private package', async () => {
    const installed = join(nodeApp, 'node_modules', '@meridian', 'realtime-client')
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'))
    expect(manifest.exports['.']).toEqual({
      types: './dist/index.d.ts',
      import: './dist/index.js',
      default: './dist/index.js',
    })
    expect(Object.keys(manifest.dependencies)).toEqual(['socket.io-client'])
    const modules = await readdir(join(nodeApp, 'node_modules'))
    expect(modules).toContain('socket.io-client')
    expect(modules).not.toContain('typebox')
    const shipped = await readdir(join(installed, 'dist'), { recursive: true })
    expect(shipped.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([])
    const declarations = await readdir(join(installed, 'dist'))
    for (const file of declarations.filter((name) => name.endsWith('.d.ts'))) {
      const text = await readFile(join(installed, 'dist', file), 'utf8')
      expect(text).not.toMatch(/from ['"](@meridian\/contracts|typebox)/)
    }
  })

  it('when a plain Node project imports it, then it connects with its token, requests, and hears the server', async () => {
    const heard = JSON.parse(await sh(process.execPath, ['main.mjs', server.url], nodeApp, scaledMs(20_000)))
    expect(heard.welcome).toMatchObject({ type: 'welcome', message: 'hello outside-token' })
    expect(heard.echo).toEqual({ ok: true, echo: { type: 'echo', payload: { from: 'outside' } } })
    expect(heard.refusal).toEqual({ typed: true, code: 'FORBIDDEN', message: 'Not allowed' })
    // what docs/reference/realtime-client.md says: with recovery on, a broadcast's handler gets the offset as a last argument
    expect(heard.broadcast).toHaveLength(2)
    expect(heard.broadcast[0]).toMatchObject({ text: 'hi all' })
    expect(typeof heard.broadcast[1]).toBe('string')
  })

  it('when its browser bundle is loaded on its own, then it runs on the platform WebSocket and imports nothing', async () => {
    const bundle = join(
      nodeApp,
      'node_modules',
      '@meridian',
      'realtime-client',
      'dist',
      'browser',
      'realtime-client.js',
    )
    expect(await readFile(bundle, 'utf8')).not.toMatch(/^import\b|\bimport\s*\(|\brequire\(/m)
    // Node 24's global WebSocket stands in for a browser's: the bundle is socket.io-client's browser build
    const heard = JSON.parse(
      await sh(process.execPath, ['main.mjs', server.url, bundle], nodeApp, scaledMs(20_000)),
    )
    expect(heard.welcome).toMatchObject({ message: 'hello outside-token' })
    expect(heard.echo).toMatchObject({ ok: true })
  })

  it('when a TypeScript project type-checks against it, then payloads are typed and misuse is refused', async () => {
    // app.ts's @ts-expect-error lines fail the check if a mistake type-checks; skipLibCheck is off, so the shipped
    // declarations themselves are checked too
    await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], nodeApp, scaledMs(60_000))
  })

  it('when a Vite page imports it, then vite build bundles the SDK and socket.io-client for the browser', async () => {
    await build({ root: vitePage, configFile: false, logLevel: 'error', build: { outDir: 'dist' } })
    const assets = join(vitePage, 'dist', 'assets')
    const scripts = (await readdir(assets)).filter((file) => file.endsWith('.js'))
    const code = (await Promise.all(scripts.map((file) => readFile(join(assets, file), 'utf8')))).join('\n')
    expect(code).toContain('No acknowledgement of') // the SDK's request()
    expect(code).toContain('io server disconnect') // socket.io-client
    expect(await readFile(join(vitePage, 'dist', 'index.html'), 'utf8')).toMatch(
      /<script type="module"[^>]+assets\//,
    )
  })
})
