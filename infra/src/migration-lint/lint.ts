// Lints every migration of the repository with squawk (.squawk.toml): a migration must be safe to run while the
// previous release serves traffic (no table rewrite, no lock held through a scan, indexes built concurrently, NOT NULL
// added in steps). Exceptions are squawk's own `-- squawk-ignore <rule>` comments in a file, with the reason beside
// them, and the pre-release list (pre-release.ts) for files that can no longer change.
import { execFile } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { preReleaseFindings } from './pre-release.ts'

const run = promisify(execFile)

export interface SquawkFinding {
  /** from the repository's root */
  file: string
  /** 1-based */
  line: number
  rule: string
  message: string
}

export interface LintResult {
  files: string[]
  /** findings neither ignored in their file nor accepted as pre-release: each fails the lint */
  violations: SquawkFinding[]
  /** findings the pre-release list accepts */
  accepted: SquawkFinding[]
  /** pre-release entries no finding matches any more (a rule renamed, a file gone): the list must shrink with them */
  staleExceptions: { file: string; rule: string }[]
}

export interface LintOptions {
  /** the repository's root: .squawk.toml and the migrations folders are found from it */
  root: string
  /** the squawk binary; default the one squawk-cli installs in infra/node_modules/.bin */
  squawk?: string
  /** only these files (from root); default every migrations folder's .sql files */
  files?: string[]
  /** file -> rules accepted without a comment; default the pre-release list */
  exceptions?: Readonly<Record<string, readonly string[]>>
}

/** services/<name>/migrations, packages/<name>/migrations and packages/<name>/<track>-migrations (the audit trail's) */
export async function migrationFiles(root: string): Promise<string[]> {
  const files: string[] = []
  for (const parent of ['services', 'packages']) {
    for (const workspace of await readdir(join(root, parent), { withFileTypes: true })) {
      if (!workspace.isDirectory()) continue
      const base = join(root, parent, workspace.name)
      for (const folder of await readdir(base, { withFileTypes: true })) {
        if (!folder.isDirectory() || !/(^|-)migrations$/.test(folder.name)) continue
        for (const file of await readdir(join(base, folder.name))) {
          if (file.endsWith('.sql')) files.push(relative(root, join(base, folder.name, file)))
        }
      }
    }
  }
  return files.sort()
}

// The runner's mark (packages/db/src/migration-files.ts): a file that runs outside a transaction is linted as such,
// so squawk checks `concurrently` statements as they will run.
const noTransactionMark = /^--\s*meridian:.*\bno-transaction\b/m

interface SquawkJsonFinding {
  file: string
  line: number
  rule_name: string
  message: string
}

async function squawkFindings(
  squawk: string,
  root: string,
  files: string[],
  inTransaction: boolean,
): Promise<SquawkFinding[]> {
  if (files.length === 0) return []
  const args = [
    '--config',
    join(root, '.squawk.toml'),
    '--reporter',
    'json',
    inTransaction ? '--assume-in-transaction' : '--no-assume-in-transaction',
    ...files,
  ]
  let stdout: string
  try {
    ;({ stdout } = await run(squawk, args, { cwd: root, maxBuffer: 16 * 1024 * 1024 }))
  } catch (error) {
    // squawk exits 1 when it found something; its report is still on stdout
    const failed = error as { stdout?: string; stderr?: string; code?: number }
    if (failed.code !== 1 || !failed.stdout?.trim().startsWith('[')) {
      throw new Error(`squawk failed (exit ${failed.code}): ${failed.stderr?.trim() ?? String(error)}`)
    }
    stdout = failed.stdout
  }
  const parsed = JSON.parse(stdout) as SquawkJsonFinding[]
  return parsed.map((finding) => ({
    file: finding.file,
    line: finding.line + 1,
    rule: finding.rule_name,
    message: finding.message,
  }))
}

export async function lintMigrations(options: LintOptions): Promise<LintResult> {
  const root = options.root
  const squawk = options.squawk ?? join(root, 'infra/node_modules/.bin/squawk')
  const files = options.files ?? (await migrationFiles(root))
  const exceptions = options.exceptions ?? preReleaseFindings
  const outside: string[] = []
  const inside: string[] = []
  for (const file of files) {
    ;(noTransactionMark.test(await readFile(join(root, file), 'utf8')) ? outside : inside).push(file)
  }
  const findings = [
    ...(await squawkFindings(squawk, root, inside, true)),
    ...(await squawkFindings(squawk, root, outside, false)),
  ]
  const violations: SquawkFinding[] = []
  const accepted: SquawkFinding[] = []
  for (const finding of findings) {
    ;(exceptions[finding.file]?.includes(finding.rule) ? accepted : violations).push(finding)
  }
  const linted = new Set(files)
  const staleExceptions = Object.entries(exceptions)
    .filter(([file]) => linted.has(file))
    .flatMap(([file, rules]) => rules.map((rule) => ({ file, rule })))
    .filter(({ file, rule }) => !accepted.some((finding) => finding.file === file && finding.rule === rule))
  return { files, violations, accepted, staleExceptions }
}
