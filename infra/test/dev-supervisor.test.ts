// The development runner's supervisor (src/dev/supervisor.ts), as scripts/dev runs it: a service that ends with a
// failure is started again, a change under a watched folder restarts it, and a stop reaches it as one TERM.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { supervise } from '../src/dev/supervisor.ts'
import { eventually } from './eventually.ts'

const fixture = fileURLToPath(new URL('./fixtures/flaky-service.mjs', import.meta.url))
const supervisorScript = fileURLToPath(new URL('../src/dev/supervisor.ts', import.meta.url))
const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url))

const folders: string[] = []
const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

function workspace() {
  const folder = mkdtempSync(join(tmpdir(), 'meridian-supervisor-'))
  folders.push(folder)
  // the record is beside the watched folder, never in it: its writes are not changes of the code
  const record = join(folder, 'record')
  writeFileSync(record, '')
  const watched = join(folder, 'src')
  mkdirSync(watched)
  return { record, watched, lines: () => readFileSync(record, 'utf8').split('\n').filter(Boolean) }
}

const linesBecome = (lines: () => string[], expected: string[]) =>
  eventually(`the service's record reads ${expected.join(', ')}`, async () =>
    JSON.stringify(lines()) === JSON.stringify(expected) ? true : undefined,
  )

describe('the development supervisor', () => {
  it('when the service ends with a failure, then it is started again; a watched change restarts it with one TERM; a stop is one TERM and its code', async () => {
    const { watched, record, lines } = workspace()
    const said: string[] = []
    const supervisor = supervise({
      name: 'flaky',
      command: process.execPath,
      args: [fixture, record],
      watch: [watched],
      firstBackoffMs: 50,
      say: (line) => said.push(line),
    })
    // a252e60's `tsx watch` left a crashed service down until a file changed
    await linesBecome(lines, ['start', 'start'])
    expect(said).toContainEqual(expect.stringMatching(/^flaky ended \(code 1\); starting it again in 0.05 s/))

    writeFileSync(join(watched, 'changed.ts'), 'export {}\n')
    await linesBecome(lines, ['start', 'start', 'term', 'start'])
    expect(await supervisor.stop()).toBe(0)
    expect(lines()).toEqual(['start', 'start', 'term', 'start', 'term'])
    expect(supervisor.starts).toBe(3)
  })

  it('when it keeps failing, then each wait doubles up to the limit; a clean exit waits for a change', async () => {
    const said: string[] = []
    const supervisor = supervise({
      name: 'failing',
      command: process.execPath,
      args: ['-e', 'process.exit(3)'],
      watch: [],
      firstBackoffMs: 20,
      maxBackoffMs: 80,
      say: (line) => said.push(line),
    })
    await eventually('four failures', async () => (said.length >= 4 ? true : undefined))
    await supervisor.stop()
    expect(said.slice(0, 4).map((line) => /in ([\d.]+) s/.exec(line)?.[1])).toEqual([
      '0.02',
      '0.04',
      '0.08',
      '0.08',
    ])

    const quiet: string[] = []
    const clean = supervise({
      name: 'clean',
      command: process.execPath,
      args: ['-e', 'process.exit(0)'],
      watch: [],
      say: (line) => quiet.push(line),
    })
    await eventually('the clean exit said', async () => (quiet.length > 0 ? true : undefined))
    expect(quiet).toEqual(['clean exited; it starts again when a watched file changes'])
    expect(clean.starts).toBe(1)
    await clean.stop()
  })

  it('when run as scripts/dev runs it and sent TERM, then the service gets TERM once and the supervisor exits with its code', async () => {
    const { watched, record, lines } = workspace()
    const child = spawn(
      tsx,
      [supervisorScript, '--name', 'flaky', '--watch', watched, '--', process.execPath, fixture, record],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    children.push(child)
    let output = ''
    child.stderr?.on('data', (chunk) => {
      output += String(chunk)
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await linesBecome(lines, ['start', 'start'])
    expect(output).toContain('[supervisor] flaky ended (code 1); starting it again in 1 s (start 2)')
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(lines()).toEqual(['start', 'start', 'term'])
  })
})
