// serviceMain, every service's main.ts: a process declared by name, configuration, migration and buildApp
// migrates before it builds, listens, and on SIGTERM closes the app before the clients it returned; a failed start ends
// it with code 1; a service without a database (the gateway's form) opens none.
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { eventually, freshDatabase, serviceTestEnv, type TestDatabase } from '@meridian/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const fixture = fileURLToPath(new URL('./fixtures/widgets-main.ts', import.meta.url))

interface Run {
  child: ChildProcess
  output(): string
  exited: Promise<number | null>
}

function run(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...serviceTestEnv(),
      HOST: '127.0.0.1',
      CONSUL_REGISTER: 'false',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += String(chunk)
  })
  child.stderr?.on('data', (chunk) => {
    output += String(chunk)
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** Waits until `started` listens, sends SIGTERM, and gives its exit code and the steps it took. */
async function listenThenStop(started: Run): Promise<{ code: number | null; steps: string[] }> {
  await eventually('the process listens', () => stepsOf(started.output()).includes('listening'))
  started.child.kill('SIGTERM')
  const code = await started.exited
  return { code, steps: stepsOf(started.output()) }
}

const stepsOf = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('step: '))
    .map((line) => line.slice('step: '.length))

describe('serviceMain', () => {
  let database: TestDatabase
  let running: Run | undefined

  beforeEach(async () => {
    database = await freshDatabase('widgets')
  })

  afterEach(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGKILL')
      await running.exited
    }
    running = undefined
    await database.drop()
  })

  it('when declared with a database and stopped with SIGTERM, then it migrates, builds with its backbone asked for, listens, and closes the app before its clients; exit code 0', async () => {
    running = run({ DATABASE_URL: database.url })
    const { code, steps } = await listenThenStop(running)
    expect(code).toBe(0)
    expect(steps).toEqual(['migrated', 'built, events: true', 'listening', 'app closed', 'client stopped'])
  })

  it('when SIGTERM comes the moment it listens, then it still drains: the app closed before its clients, exit code 0', async () => {
    running = run({ DATABASE_URL: database.url, WIDGETS_TERM_ON_LISTEN: 'true' })
    expect(await running.exited).toBe(0)
    expect(stepsOf(running.output())).toEqual([
      'migrated',
      'built, events: true',
      'listening',
      'app closed',
      'client stopped',
    ])
  })

  it('when its migration fails, then it never builds the app, says why on stderr and exits with code 1', async () => {
    running = run({ DATABASE_URL: database.url, WIDGETS_FAIL: 'migrate' })
    expect(await running.exited).toBe(1)
    expect(running.output()).toContain('widgets: failed to start: Error: the migration failed')
    expect(stepsOf(running.output())).toEqual([])
  })

  for (const how of ['throw', 'reject'] as const) {
    it(`when a request leaves a failure nobody handles (${how}), then the fatal line names that request, the instance drains and exits 1 for its supervisor to restart`, async () => {
      running = run({ DATABASE_URL: database.url })
      await eventually('the process listens', () => stepsOf(running?.output() ?? '').includes('listening'))
      const port = /^port: (\d+)$/m.exec(running.output())?.[1]
      const answer = await fetch(`http://127.0.0.1:${port}/crash`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ how }),
      })
      expect(answer.status).toBe(200)
      const requestId = answer.headers.get('x-request-id')
      expect(await running.exited).toBe(1)
      const fatal = running
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.msg === 'fatal error; shutting down')
      // a252e60 logged the error alone: nothing said which request left it behind
      expect(fatal).toMatchObject({
        requestId,
        during: { kind: 'request', requestId, method: 'POST', route: '/crash' },
        err: { message: how === 'throw' ? 'a widget exploded in a timer' : 'a widget rejected unawaited' },
      })
      // drained as on SIGTERM: the app, then its clients
      expect(stepsOf(running.output()).slice(-2)).toEqual(['app closed', 'client stopped'])
    })
  }

  it('when declared without a database, then it builds and listens on Redis alone, and closes as the others do', async () => {
    // an unreachable DATABASE_URL: a process that opened a pool on it would fail its readiness, not start
    running = run({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', WIDGETS_STATELESS: 'true' })
    const { code, steps } = await listenThenStop(running)
    expect(code).toBe(0)
    expect(steps).toEqual([
      'built without a database, events: true',
      'listening',
      'app closed',
      'client stopped',
    ])
  })
})
