// with-infra -- <command...>: obtains the engines once, as a suite's global setup would (obtain-infra.ts), runs the
// command with their endpoints in its environment, and stops what it started once the command has ended (or on
// SIGINT/SIGTERM, passed on to the command first). For several suites in a row: each one's global setup then finds
// the endpoints in the environment, and one set of engine containers serves them all instead of a set each
// (./scripts/test's container path). Exits with the command's status.
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import { endpointEnvironment, obtainInfra } from './obtain-infra.ts'

async function main(): Promise<number> {
  const separator = process.argv.indexOf('--')
  const command = separator === -1 ? [] : process.argv.slice(separator + 1)
  const [program, ...args] = command
  if (program === undefined) {
    process.stderr.write('usage: with-infra.ts -- <command...>\n')
    return 2
  }
  const progress = (message: string) => {
    if (process.env.MERIDIAN_TEST_VERBOSE) process.stderr.write(`[infra] ${message}\n`)
  }
  const infra = await obtainInfra(process.env, progress)
  process.stderr.write(`${infra.line} (one set for: ${command.join(' ')})\n`)
  try {
    const child = spawn(program, args, {
      stdio: 'inherit',
      env: { ...process.env, ...endpointEnvironment(infra.endpoints) },
    })
    const forward = (signal: NodeJS.Signals) => child.kill(signal)
    process.on('SIGINT', forward).on('SIGTERM', forward)
    return await new Promise<number>((resolve, reject) => {
      child.on('error', reject)
      child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)))
    })
  } finally {
    await infra.teardown()
  }
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
