// The documentation's examples, run as a reader would paste them: README's quick start, the walkthrough of
// docs/api.md then docs/commerce.md (one shell: each block uses what the blocks before it assigned), and the SDK's
// quick start (docs/realtime-client.md: its tarball in a project outside the repository); their bash blocks in order
// against the whole system, with the run's gateway and simulator in place of the development ports (the blocks read
// them from $A and $SIM). Only the line that starts the system is left out: it is running already.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, inject, it } from 'vitest'
import '../src/system-context.ts'

const system = inject('system')
const root = fileURLToPath(new URL('../../../', import.meta.url))
const run = promisify(execFile)

/** The bash blocks of `markdown`, in order; only those of the section headed `heading` when one is given. */
export function bashBlocksOf(markdown: string, heading?: string): string[] {
  let section = markdown
  if (heading !== undefined) {
    const start = markdown.indexOf(`\n${heading}\n`)
    if (start === -1) throw new Error(`no section ${heading}`)
    const rest = markdown.slice(start + heading.length + 2)
    const end = rest.search(/\n## /)
    section = end === -1 ? rest : rest.slice(0, end)
  }
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1] ?? '')
}

const page = (path: string) => readFileSync(`${root}${path}`, 'utf8')

/** Runs the blocks as one pasted script (bash, stopping at the first failure); its output. */
async function paste(blocks: string[]): Promise<string> {
  const script = blocks
    .join('\n')
    .split('\n')
    .filter((line) => !/^\.\/scripts\/dev\b/.test(line))
    .join('\n')
  const auth = system.services.auth
  if (!auth?.databaseUrl) throw new Error("the run's auth has no database to make the examples' admin in")
  try {
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      env: {
        ...process.env,
        A: system.gatewayUrl,
        SIM: system.simulatorUrl,
        // create-admin writes in the run's auth database (it announces revocations in the run's Redis, REDIS_URL)
        AUTH_DATABASE_URL: auth.databaseUrl,
      },
      timeout: 180_000,
      maxBuffer: 8 * 1024 * 1024,
    })
    return stdout
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(
      `the pasted blocks failed:\n--- stdout\n${stdout.slice(-4000)}\n--- stderr\n${stderr.slice(-4000)}`,
    )
  }
}

describe('the documentation, pasted', () => {
  it("when README's quick start is pasted against the running system, then the order ships and every step succeeds", async () => {
    const blocks = bashBlocksOf(page('README.md'), '## Quick start')
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    const stdout = await paste(blocks)
    expect(stdout).toMatch(/order [0-9a-f-]{36}: shipped/)
    expect(stdout).toContain('"payment"')
    expect(stdout).toContain('"shipment"')
  })

  it('when the walkthrough of the API and of commerce is pasted in order, then every step answers as it says', async () => {
    const blocks = [...bashBlocksOf(page('docs/api.md')), ...bashBlocksOf(page('docs/commerce.md'))]
    expect(blocks.length).toBeGreaterThanOrEqual(8)
    const stdout = await paste(blocks)
    // the expected refusals were checked by the blocks themselves (jq -e); the statuses they print are these
    expect(stdout).toContain('204')
    expect(stdout).toContain('412')
  })

  it("when the SDK's quick start is pasted, then a project outside the repository installs its tarball and hears the channel through the gateway", async () => {
    const blocks = bashBlocksOf(page('docs/realtime-client.md'), '## Quick start')
    expect(blocks).toHaveLength(2)
    const stdout = await paste(blocks)
    expect(stdout).toMatch(/^Welcome\b.*$/m)
    expect(stdout).toContain('echo: {"hello":"Meridian"}')
  })
})
