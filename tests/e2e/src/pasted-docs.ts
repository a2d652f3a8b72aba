// The documentation's bash blocks, run as a reader pastes them against the whole system: the run's gateway and
// simulator in place of the development ports ($A and $SIM), auth's database for create-admin and the seed. The line
// that starts the system (./scripts/dev …) is left out: it is running already.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { E2eSystem } from './system-context.ts'

const root = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * bash -euo pipefail -c `script`, its output collected; rejects with it when the script fails or runs past
 * `timeoutMs`. Its standard input is /dev/null, not a pipe: Node's pipes are sockets, and bash on a socket with
 * SHLVL unset or 0 takes itself for a remote shell and reads /etc/bash.bashrc, which fails under -u (a fresh
 * clone's run failed so, once).
 */
export function runBash(
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(Object.assign(error, { stdout, stderr }))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve({ stdout, stderr })
      else reject(Object.assign(new Error(`bash exited ${code ?? signal}`), { stdout, stderr }))
    })
  })
}

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
  system: Pick<E2eSystem, 'gatewayUrl' | 'simulatorUrl' | 'services' | 'redisEnv'>,
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
    return await runBash(script, {
      cwd: root,
      env: {
        ...process.env,
        A: system.gatewayUrl,
        SIM: system.simulatorUrl,
        // create-admin writes in the run's auth database and announces revocations in the run's Redis
        AUTH_DATABASE_URL: auth.databaseUrl,
        ...system.redisEnv,
        ...env,
      },
      timeoutMs: 240_000,
    })
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(
      `the pasted blocks failed:\n--- stdout\n${stdout.slice(-4000)}\n--- stderr\n${stderr.slice(-4000)}`,
    )
  }
}
