// The documentation's bash blocks, run as a reader pastes them against the whole system: the run's gateway and
// simulator in place of the development ports ($A and $SIM), auth's database for create-admin and the seed. The line
// that starts the system (./scripts/dev …) is left out: it is running already.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { E2eSystem } from './system-context.ts'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const run = promisify(execFile)

/** A page of the repository, by its path from the root. */
export const page = (path: string) => readFileSync(`${root}${path}`, 'utf8')

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

/** Runs the blocks as one pasted script (bash, stopping at the first failure) from the root; its output. */
export async function paste(
  system: Pick<E2eSystem, 'gatewayUrl' | 'simulatorUrl' | 'services'>,
  blocks: string[],
  env: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  const script = blocks
    .join('\n')
    .split('\n')
    .filter((line) => !/^\.\/scripts\/dev\b/.test(line))
    .join('\n')
  const auth = system.services.auth
  if (!auth?.databaseUrl) throw new Error("the run's auth has no database to make the examples' admin in")
  try {
    return await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      env: {
        ...process.env,
        A: system.gatewayUrl,
        SIM: system.simulatorUrl,
        // create-admin writes in the run's auth database (it announces revocations in the run's Redis, REDIS_URL)
        AUTH_DATABASE_URL: auth.databaseUrl,
        ...env,
      },
      timeout: 240_000,
      maxBuffer: 8 * 1024 * 1024,
    })
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(
      `the pasted blocks failed:\n--- stdout\n${stdout.slice(-4000)}\n--- stderr\n${stderr.slice(-4000)}`,
    )
  }
}
