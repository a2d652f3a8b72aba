// Reads and checks a migrations folder: numbered `NNNN_snake_name.sql` files, in numeric order, each with its checksum.
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MigrationError } from './migration-error.ts'

/**
 * When a migration may run. `expand` (the default) only adds: the code before it and the code after it both work with
 * the schema it leaves, so it runs before the new code starts. `contract` removes or tightens what the previous release
 * still uses (a dropped column, a new NOT NULL): it runs only after every instance runs the release that stopped using
 * it, when asked explicitly (migrate's `contract` option).
 */
export type MigrationPhase = 'expand' | 'contract'

export interface MigrationFile {
  version: number
  /** the snake_case part of the file name, e.g. `create_orders` */
  name: string
  file: string
  sql: string
  /** sha256 of the file's bytes, hex */
  checksum: string
  /** from a `-- meridian: contract` line in the file's leading comments; `expand` without one */
  phase: MigrationPhase
  /**
   * false with a `-- meridian: no-transaction` line: statements that refuse a transaction (`create index
   * concurrently`) run one by one, and the file must be safe to run again after a failure halfway (`if not exists`)
   */
  transaction: boolean
}

/** A trimmed comment line's marks (`-- meridian: contract, no-transaction`), or undefined when it is no header. */
function headerOf(trimmed: string): string | undefined {
  const comment = trimmed.slice(2).trimStart()
  if (!comment.startsWith('meridian:')) return undefined
  const marks = comment.slice('meridian:'.length).trim()
  return marks === '' ? undefined : marks
}
const knownMarks = new Set(['expand', 'contract', 'no-transaction'])

/**
 * The `-- meridian: <mark>[, <mark>]` lines among the comments and blank lines that open a file: the runner's part of
 * a migration, beside squawk's own `-- squawk-ignore` comments. An unknown mark is refused, so a typo cannot turn a
 * contract migration into an expand one.
 */
export function migrationMarks(file: string, sql: string): { phase: MigrationPhase; transaction: boolean } {
  let phase: MigrationPhase = 'expand'
  let transaction = true
  for (const line of sql.split('\n')) {
    const trimmed = line.trim()
    if (trimmed === '') continue
    if (!trimmed.startsWith('--')) break
    const header = headerOf(trimmed)
    if (header === undefined) continue
    for (const mark of header.split(',').map((part) => part.trim())) {
      if (!knownMarks.has(mark)) {
        throw new MigrationError(
          `migration ${file} has an unknown mark '${mark}' (known: ${[...knownMarks].join(', ')})`,
          { file },
        )
      }
      if (mark === 'contract') phase = 'contract'
      if (mark === 'no-transaction') transaction = false
    }
  }
  return { phase, transaction }
}

const fileNamePattern = /^(\d{4,})_([a-z0-9]+(?:_[a-z0-9]+)*)\.sql$/
// schema_migrations.version is an integer column.
const maxVersion = 2_147_483_647

/**
 * The migrations of `dir`, sorted by version. Only `.sql` files count (a README may sit beside them); a `.sql` file
 * whose name does not match the pattern, or two files with the same version, reject the whole folder.
 */
export async function readMigrationFiles(dir: string): Promise<MigrationFile[]> {
  let entries: string[]
  try {
    entries = await readdir(dir)
  } catch (error) {
    throw new MigrationError(`cannot read the migrations folder ${dir}`, { cause: error })
  }

  const byVersion = new Map<number, MigrationFile>()
  for (const file of entries.filter((entry) => entry.toLowerCase().endsWith('.sql')).sort()) {
    const match = fileNamePattern.exec(file)
    if (!match) {
      throw new MigrationError(
        `migration file name ${file} does not match NNNN_snake_name.sql (at least 4 digits, lower-case name)`,
        { file },
      )
    }
    const version = Number(match[1])
    if (version > maxVersion) {
      throw new MigrationError(`migration ${file} has a version above ${maxVersion}`, { file })
    }
    const other = byVersion.get(version)
    if (other) {
      throw new MigrationError(`migrations ${other.file} and ${file} have the same version ${version}`, {
        file,
      })
    }
    const content = await readFile(join(dir, file))
    const sql = content.toString('utf8')
    byVersion.set(version, {
      version,
      name: match[2]!,
      file,
      sql,
      checksum: createHash('sha256').update(content).digest('hex'),
      ...migrationMarks(file, sql),
    })
  }
  return [...byVersion.values()].sort((a, b) => a.version - b.version)
}
