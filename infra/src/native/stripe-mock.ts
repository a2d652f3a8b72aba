// stripe-mock: Stripe's own mock of its API, generated from Stripe's OpenAPI description. It keeps no state and answers
// fixtures, but it validates every request against the description of the API version it carries (strictly: another
// Stripe-Version is refused), so a request naming a field or value Stripe does not have fails. Built once from
// infra/stripe-mock (the Go module proxy) by the preparation; a test starts its own on a free loopback port.
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../free-port.ts'
import { infraDir, type Layout, layoutFromEnv } from '../layout.ts'
import { builtGoBinary, type GoBuild, requiredVersion } from './go-build.ts'

const wrapperDir = join(infraDir, 'stripe-mock')
const stripeMockModule = 'github.com/stripe/stripe-mock'

/** The Stripe API version stripe-mock v0.203.0 describes: the one the payment service's SDK (stripe 22.6) pins. */
export const stripeMockApiVersion = '2026-08-26.dahlia'

/** A secret key stripe-mock accepts: `sk_test_` and one more part, nothing else. */
export const stripeMockSecretKey = 'sk_test_meridian'

/** How stripe-mock is built from infra/stripe-mock, once per version, into the cache's stripe-mock/bin. */
export function stripeMockBuild(layout: Layout): GoBuild {
  const version = requiredVersion(wrapperDir, stripeMockModule)
  return {
    name: 'stripe-mock',
    title: `stripe-mock ${version}`,
    version,
    wrapperDir,
    mainPackage: stripeMockModule,
    toolchain: 'local',
    binDir: join(layout.componentDir('stripe-mock'), 'bin'),
  }
}

export interface StripeMock {
  /** http://127.0.0.1:<port> */
  url: string
  host: string
  port: number
  stop(): Promise<void>
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/v1/balance`, {
      headers: { authorization: `Bearer ${stripeMockSecretKey}` },
      signal: AbortSignal.timeout(1_000),
    })
    return true
  } catch {
    return false
  }
}

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/** Starts stripe-mock on a free port of 127.0.0.1 (HTTP only, strict about the API version); resolves once it answers. */
export async function startStripeMock(layout: Layout = layoutFromEnv()): Promise<StripeMock> {
  const binary = builtGoBinary(stripeMockBuild(layout))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  let output = ''
  const child = spawn(binary, ['-http-addr', `127.0.0.1:${port}`, '-strict-version-check'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  // its embedded description (8 MB) is parsed at start: up to some seconds on a loaded machine
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`stripe-mock exited with ${child.exitCode}:\n${output}`)
    if (await answers(url)) return { url, host: '127.0.0.1', port, stop: () => stopped(child) }
    await sleep(100)
  }
  await stopped(child)
  throw new Error(`stripe-mock did not answer on ${url} within 60 s:\n${output}`)
}
