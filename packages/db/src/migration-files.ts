// Reads and checks a migrations folder: numbered `NNNN_snake_name.sql` files, in numeric order, each with its checksum.
import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MigrationError } from './migration-error.ts'

export interface MigrationFile {
  version: number
  /** the snake_case part of the file name, e.g. `create_orders` */
  name: string
  file: string
  sql: string
  /** sha256 of the file's bytes, hex */
  checksum: string
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
    byVersion.set(version, {
      version,
      name: match[2]!,
      file,
      sql: content.toString('utf8'),
      checksum: createHash('sha256').update(content).digest('hex'),
    })
  }
  return [...byVersion.values()].sort((a, b) => a.version - b.version)
}
