// Crash-only, as compose runs the images: a service that ends with a failure (service-kit's run-service.ts drains and
// exits non-zero after a failure nothing handled) is started again under docker-compose.yml's own restart policy.
// Proved with the engine and compose scripts/images uses (podman and podman-compose here) on the images' runtime
// base: a container that fails on its first start and runs on its second.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { repoRoot } from '../src/layout.ts'
import { chosenContainerEngine } from '../src/prepare/container-images.ts'
import { pythonToolPath } from '../src/prepare/index.ts'
import { eventually } from './eventually.ts'

interface ComposeService {
  restart?: string
  network_mode?: string
  user?: string
  read_only?: boolean
  tmpfs?: string[]
}
const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>
}

const folder = mkdtempSync(join(tmpdir(), 'meridian-compose-restart-'))
const project = `meridian-restart-${randomBytes(3).toString('hex')}`
let down: (() => void) | undefined

afterAll(() => {
  down?.()
  rmSync(folder, { recursive: true, force: true })
})

/** The runtime base the images are built on: the official one when the engine has it, else the one built here. */
function runtimeBase(engine: string): string {
  const version = readFileSync(join(repoRoot, '.node-version'), 'utf8').trim()
  const candidates = [
    process.env.MERIDIAN_RUNTIME_BASE,
    'node:24-bookworm-slim',
    `localhost/meridian/node:${version}-bookworm-slim`,
  ]
  for (const image of candidates) {
    if (!image) continue
    try {
      execFileSync(engine, ['image', 'inspect', image], { stdio: 'ignore' })
      return image
    } catch {}
  }
  throw new Error(`none of ${candidates.filter(Boolean).join(', ')} is in ${engine}: run ./scripts/prepare`)
}

// the first start fails as a service does after a failure nothing handled (exit code 1); the next ones keep running
const service = `
const fs = require('node:fs')
fs.appendFileSync('/record/starts', 'start\\n')
if (fs.readFileSync('/record/starts', 'utf8').trim().split('\\n').length === 1) process.exit(1)
setInterval(() => {}, 1000)
`

describe("docker-compose.yml's restart policy", () => {
  it('when a service ends with a failure, then compose starts it again', async () => {
    const engine = await chosenContainerEngine()
    const order = compose.services.order ?? {}
    // the services' own settings (the x-service anchor every service of the system merges)
    expect(order.restart).toBe('on-failure')
    writeFileSync(join(folder, 'starts'), '')
    // the container runs as 10001, like the services: the record is open to it
    chmodSync(folder, 0o777)
    chmodSync(join(folder, 'starts'), 0o666)
    const file = join(folder, 'compose.yml')
    writeFileSync(
      file,
      stringify({
        services: {
          failing: {
            image: runtimeBase(engine),
            restart: order.restart,
            network_mode: order.network_mode,
            user: order.user,
            read_only: order.read_only,
            tmpfs: order.tmpfs,
            command: ['node', '-e', service],
            volumes: [`${folder}:/record`],
          },
        },
      }),
    )
    const composeCommand = engine === 'docker' ? ['docker', 'compose'] : [pythonToolPath('podman-compose')]
    const run = (...args: string[]) =>
      execFileSync(
        composeCommand[0] as string,
        [...composeCommand.slice(1), '-p', project, '-f', file, ...args],
        {
          stdio: 'pipe',
          // podman's settings of the project, as scripts/images gives them (runc, host networking, the ulimits)
          env: { ...process.env, CONTAINERS_CONF: join(repoRoot, 'infra', 'containers', 'containers.conf') },
        },
      )
    down = () => {
      run('down', '-t', '1')
    }
    run('up', '-d')
    await eventually('the failed service started again', async () => {
      const starts = readFileSync(join(folder, 'starts'), 'utf8').trim().split('\n').filter(Boolean)
      return starts.length >= 2 ? starts : undefined
    })
  })
})
