// README's quick start, run as a reader would paste it: its bash blocks in order, against the whole system, with the
// run's gateway and simulator in place of the development ports (the blocks read them from $A and $SIM). Only the
// line that starts the system is left out: the test's system is running already.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, inject, it } from 'vitest'
import '../src/system-context.ts'

const system = inject('system')
const root = fileURLToPath(new URL('../../../', import.meta.url))
const run = promisify(execFile)

/** The bash blocks of the README section headed `heading`, in order. */
export function bashBlocksOf(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`)
  if (start === -1) throw new Error(`README has no section ${heading}`)
  const rest = markdown.slice(start + heading.length + 2)
  const end = rest.search(/\n## /)
  const section = end === -1 ? rest : rest.slice(0, end)
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1] ?? '')
}

describe("README's quick start", () => {
  it('when its blocks are pasted in order against the running system, then the order ships and every step succeeds', async () => {
    const blocks = bashBlocksOf(readFileSync(`${root}README.md`, 'utf8'), '## Quick start')
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    const script = blocks
      .join('\n')
      .split('\n')
      .filter((line) => !/^\.\/scripts\/dev\b/.test(line))
      .join('\n')
    const auth = system.services.auth
    if (!auth?.databaseUrl)
      throw new Error("the run's auth has no database to make the quick start's admin in")
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      env: {
        ...process.env,
        A: system.gatewayUrl,
        SIM: system.simulatorUrl,
        // create-admin writes in the run's auth database (it announces revocations in the run's Redis, REDIS_URL)
        AUTH_DATABASE_URL: auth.databaseUrl,
      },
      timeout: 120_000,
      maxBuffer: 4 * 1024 * 1024,
    })
    expect(stdout).toMatch(/order [0-9a-f-]{36}: shipped/)
    expect(stdout).toContain('"payment"')
    expect(stdout).toContain('"shipment"')
  })
})
