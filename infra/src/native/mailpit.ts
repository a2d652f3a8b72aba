// Mailpit: a mail catcher. An SMTP server that accepts every message and keeps it, and an HTTP API (and UI address)
// that reads the messages back. Built once from the Go module proxy (wrapper module infra/mailpit) by the preparation.
// `scripts/infra up` runs one on DESIGN's fixed ports (SMTP 1025, HTTP 8025), loopback only, for the development
// system; a test starts its own on free loopback ports (startMailpit) and reads it with @meridian/testkit's mailbox().
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../free-port.ts'
import { infraDir, type Layout, layoutFromEnv } from '../layout.ts'
import { startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile } from './engine.ts'
import { builtGoBinary, type GoBuild, requiredVersion } from './go-build.ts'

const SMTP_PORT = 1025
const HTTP_PORT = 8025
/** Where services send mail in development (no credentials: Mailpit accepts any, and none). */
export const nativeSmtpUrl = `smtp://127.0.0.1:${SMTP_PORT}`
/** Mailpit's HTTP API (/api/v1/…) and its UI address. */
export const nativeMailpitUrl = `http://127.0.0.1:${HTTP_PORT}`

const wrapperDir = join(infraDir, 'mailpit')
const mailpitModule = 'github.com/axllent/mailpit'

/** The Mailpit version the wrapper module pins. */
export function pinnedMailpitVersion(): string {
  return requiredVersion(wrapperDir, mailpitModule)
}

/** How Mailpit is built from infra/mailpit, once per version, into the cache's mailpit/bin. */
export function mailpitBuild(layout: Layout): GoBuild {
  const version = pinnedMailpitVersion()
  return {
    name: 'mailpit',
    title: `Mailpit ${version}`,
    version,
    wrapperDir,
    mainPackage: mailpitModule,
    // what /api/v1/info and `mailpit version` report; Mailpit's own release build sets it the same way
    ldflags: `-X ${mailpitModule}/config.Version=${version}`,
    // Mailpit's module asks for Go 1.26.0, which Go 1.21+ fetches by itself (as for Jaeger), also where the system's
    // go.env says local
    toolchain: process.env.GOTOOLCHAIN ?? 'auto',
    binDir: join(layout.componentDir('mailpit'), 'bin'),
  }
}

/** The Mailpit binary the preparation built; MissingPrerequisite before that. */
export const mailpitBinary = (layout: Layout): string => builtGoBinary(mailpitBuild(layout))

/**
 * What every Mailpit of Meridian runs with (docker-compose.yml's too): nothing that reaches beyond the machine (no
 * release check against GitHub, no reverse DNS of the SMTP client, no remote CSS or fonts in the views), and SMTP AUTH
 * accepted with any credentials and without TLS, so a client configured with a username and password (as
 * production's is) sends here unchanged.
 */
export const mailpitFlags: readonly string[] = [
  '--disable-version-check',
  '--smtp-disable-rdns',
  '--smtp-auth-accept-any',
  '--smtp-auth-allow-insecure',
  '--block-remote-css-and-fonts',
]

/** Mailpit's command line here: both listeners on 127.0.0.1, the messages in `database` (a file), mailpitFlags. */
export function mailpitArgs(options: { smtpPort: number; httpPort: number; database: string }): string[] {
  return [
    '--smtp',
    `127.0.0.1:${options.smtpPort}`,
    '--listen',
    `127.0.0.1:${options.httpPort}`,
    '--database',
    options.database,
    ...mailpitFlags,
  ]
}

/** Mailpit's own version, from its API (/api/v1/info): the probe of a Mailpit started here. */
export async function mailpitVersion(url: string): Promise<string> {
  const response = await fetch(`${url}/api/v1/info`, { signal: AbortSignal.timeout(3000) })
  if (!response.ok) throw new Error(`mailpit at ${url}: /api/v1/info answered ${response.status}`)
  const info = (await response.json()) as { Version?: string }
  return `Mailpit ${info.Version ?? '(no version)'}`
}

/**
 * An SMTP server greets a new connection with 220: the probe of a server given by SMTP_URL (whose HTTP side, if any,
 * is not ours to know). Says QUIT and closes.
 */
export function smtpGreeting(smtpUrl: string, timeoutMs = 3000): Promise<string> {
  const url = new URL(smtpUrl)
  const secure = url.protocol === 'smtps:'
  if (url.protocol !== 'smtp:' && !secure) return Promise.reject(new Error(`${smtpUrl}: not an smtp: URL`))
  if (secure) return Promise.reject(new Error(`${smtpUrl}: smtps: is not probed (TLS from the first byte)`))
  const port = Number(url.port || 25)
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port })
    let text = ''
    const fail = (error: Error) => {
      socket.destroy()
      reject(error)
    }
    socket.setTimeout(timeoutMs, () =>
      fail(new Error(`${url.host}: no SMTP greeting within ${timeoutMs} ms`)),
    )
    socket.once('error', fail)
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8')
      const line = text.split('\r\n')[0]
      if (!text.includes('\r\n') || line === undefined) return
      if (!line.startsWith('220')) return fail(new Error(`${url.host}: greeted with '${line}'`))
      socket.end('QUIT\r\n')
      socket.destroy()
      resolve(`SMTP server (${line.slice(4, 60).trim()})`)
    })
  })
}

export function nativeMailpit(layout: Layout): NativeEngine {
  const home = layout.componentDir('mailpit')
  const logFile = join(home, 'mailpit.log')
  const pidFile = new PidFile(home)

  return {
    name: 'mailpit',
    ports: [SMTP_PORT, HTTP_PORT],
    endpoint: nativeSmtpUrl,
    logFile,
    startTimeoutMs: 30_000,
    runningPid: () => pidFile.live(),
    probe: () => mailpitVersion(nativeMailpitUrl),

    async start() {
      const path = mailpitBinary(layout)
      const pid = startDaemon({
        command: path,
        // the messages in the component's folder, kept across restarts (the newest 500: Mailpit's default); its
        // own default would be a temporary file outside the cache folder
        args: mailpitArgs({ smtpPort: SMTP_PORT, httpPort: HTTP_PORT, database: join(home, 'mailpit.db') }),
        logFile,
        cwd: home,
      })
      pidFile.write(pid)
      return pid
    },

    stop: () => pidFile.stop('SIGTERM', 10_000),
  }
}

export interface Mailpit {
  /** smtp://127.0.0.1:<smtpPort>: where a test's code sends mail */
  smtpUrl: string
  smtpPort: number
  /** http://127.0.0.1:<httpPort>: its API, for @meridian/testkit's mailbox() */
  url: string
  httpPort: number
  /** its process id: stop() ends this process, and only it */
  pid: number
  /** where its messages are kept */
  dataDir: string
  /** ends its process (SIGTERM, by pid) and, unless the folder was given, removes its messages */
  stop(): Promise<void>
}

export interface StartMailpitOptions {
  /** listen on these ports (a Mailpit started again where it was); default two free ones */
  ports?: { smtp: number; http: number }
  /** keep the messages here, and leave them on stop(): a Mailpit started again on it has them; default a temporary folder */
  dataDir?: string
}

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve()
    child.once('exit', () => resolve())
    process.kill(child.pid, 'SIGTERM')
  })
}

async function mailpitPorts(options: StartMailpitOptions): Promise<{ smtp: number; http: number }> {
  if (options.ports) return options.ports
  const smtp = await freePort()
  let http = await freePort()
  while (http === smtp) http = await freePort()
  return { smtp, http }
}

/**
 * Starts a Mailpit of the test's own: SMTP and HTTP on free ports of 127.0.0.1 (or `ports`), its messages in a
 * temporary folder removed by stop() (or in `dataDir`, kept); resolves once its API and SMTP answer.
 */
export async function startMailpit(
  layout: Layout = layoutFromEnv(),
  options: StartMailpitOptions = {},
): Promise<Mailpit> {
  const binary = mailpitBinary(layout)
  const ports = await mailpitPorts(options)
  const url = `http://127.0.0.1:${ports.http}`
  const smtpUrl = `smtp://127.0.0.1:${ports.smtp}`
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'meridian-mailpit-'))
  let output = ''
  const child = spawn(
    binary,
    mailpitArgs({ smtpPort: ports.smtp, httpPort: ports.http, database: join(dataDir, 'mailpit.db') }),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const stop = async () => {
    await stopped(child)
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true })
  }
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null || child.pid === undefined) {
      await stop()
      throw new Error(`mailpit exited with ${child.exitCode}:\n${output}`)
    }
    try {
      await mailpitVersion(url)
      await smtpGreeting(smtpUrl)
      const mailpit = { smtpUrl, smtpPort: ports.smtp, url, httpPort: ports.http, pid: child.pid }
      return { ...mailpit, dataDir, stop }
    } catch {
      await sleep(100)
    }
  }
  await stop()
  throw new Error(`mailpit did not answer on ${url} within 30 s:\n${output}`)
}
