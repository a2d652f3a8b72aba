// ./scripts/release <version> [--suite-passed <log>] [--openapi-from <url>] [--date YYYY-MM-DD]
// ./scripts/release --next <version>
// docs/how-to/releasing.md says when and how; release.ts holds the steps.
import { execFile, spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { openNext, type ReleaseDocuments, ReleaseError, release, releaseRefusal } from './release.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const usage =
  'usage: ./scripts/release <version> [--suite-passed <log>] [--openapi-from <url>] [--date YYYY-MM-DD]\n' +
  '       ./scripts/release --next <version>'

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name)
  if (index === -1) return undefined
  const value = args[index + 1]
  if (!value || value.startsWith('--')) throw new ReleaseError(`${name} needs a value\n${usage}`)
  args.splice(index, 2)
  return value
}

/** ./scripts/test, its output shown and kept in a log: the proof a release asks for. */
async function runSuite(): Promise<string> {
  const log = join(root, '.turbo/release/test.log')
  await mkdir(join(root, '.turbo/release'), { recursive: true })
  const out = createWriteStream(log)
  process.stdout.write(`running ./scripts/test (its log: ${log})\n`)
  await new Promise<void>((resolve) => {
    const child = spawn(join(root, 'scripts/test'), [], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        process.stdout.write(chunk)
        out.write(chunk)
      })
    }
    // a red suite is told by its log's last line, which the refusal reads
    child.on('close', () => resolve())
  })
  await new Promise<void>((resolve) => out.end(resolve))
  return readFile(log, 'utf8')
}

/**
 * The documents as this tree produces them: AsyncAPI from the contracts (packages/contracts/scripts/asyncapi.ts,
 * which with --release also makes docs/asyncapi.released.json the compatibility check's baseline); OpenAPI as the
 * gateway merges it from every service, read from a running system (./scripts/dev, or ./scripts/images up).
 */
async function documents(openapiFrom: string): Promise<ReleaseDocuments> {
  await promisify(execFile)(process.execPath, ['packages/contracts/scripts/asyncapi.ts', '--release'], {
    cwd: root,
  })
  const asyncapi = await readFile(join(root, 'docs/asyncapi.json'), 'utf8')
  let response: Response
  try {
    response = await fetch(openapiFrom)
  } catch (error) {
    throw new ReleaseError(
      `the OpenAPI document could not be read from ${openapiFrom} (${error instanceof Error ? error.message : error}): ` +
        'start the system (./scripts/dev) or name a running gateway with --openapi-from',
    )
  }
  if (!response.ok) throw new ReleaseError(`${openapiFrom} answered ${response.status}`)
  const openapi = `${JSON.stringify(await response.json(), null, 2)}\n`
  return { asyncapi, openapi }
}

try {
  const args = process.argv.slice(2)
  const next = option(args, '--next')
  if (next) {
    if (args.length > 0) throw new ReleaseError(usage)
    const commit = await openNext(root, next)
    process.stdout.write(`${next} opened (${commit.slice(0, 12)}), not tagged\n`)
  } else {
    const suitePassed = option(args, '--suite-passed')
    const openapiFrom = option(args, '--openapi-from') ?? 'http://127.0.0.1:8080/docs/json'
    const date = option(args, '--date') ?? new Date().toISOString().slice(0, 10)
    const [version, ...rest] = args
    if (!version || rest.length > 0 || version.startsWith('--')) throw new ReleaseError(usage)
    // the cheap refusals before a suite of an hour: the version, the tree, the tag
    const early = await releaseRefusal(root, version, 'tests: 1 passed, 0 failed')
    if (early) throw new ReleaseError(early)
    const suiteLog = suitePassed ? await readFile(suitePassed, 'utf8') : await runSuite()
    const result = await release({
      root,
      version,
      date,
      suiteLog,
      documents: () => documents(openapiFrom),
      afterDocuments: async () => ['docs/asyncapi.json', 'docs/asyncapi.released.json'],
    })
    process.stdout.write(
      `released ${version}: commit ${result.commit.slice(0, 12)}, tag ${result.tag}; ${result.changed.length} files\n` +
        `push both when CI is green on the commit: git push origin main ${result.tag}\n`,
    )
  }
} catch (error) {
  if (!(error instanceof ReleaseError)) throw error
  process.stderr.write(`release: ${error.message}\n`)
  process.exitCode = 1
}
