// ./scripts/manifest [--check | --list] [--root <dir>]: writes the files derived from the services' manifest and the
// events catalogue (derived.ts), or with --check fails naming each one that is not current; --list prints the
// manifest for scripts/images, one `<name> <port> <health path> <database or ->` a line. Reads files only: offline,
// a second.
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DerivedFileError, derivedFiles, staleFiles } from './derived.ts'
import { ManifestError, readManifest } from './manifest.ts'

const args = process.argv.slice(2)
const rootAt = args.indexOf('--root')
const root =
  rootAt >= 0 && args[rootAt + 1]
    ? resolve(args[rootAt + 1] as string)
    : fileURLToPath(new URL('../../..', import.meta.url))
const mode = args.includes('--check') ? 'check' : args.includes('--list') ? 'list' : 'write'

try {
  const entries = readManifest(root)
  if (mode === 'list') {
    for (const entry of entries)
      process.stdout.write(`${entry.name} ${entry.port} ${entry.health} ${entry.database ?? '-'}\n`)
  } else {
    const files = derivedFiles(root, entries)
    const stale = staleFiles(files)
    if (mode === 'check') {
      for (const { file } of stale)
        process.stderr.write(`${file} is not current with the services' manifest: run ./scripts/manifest\n`)
      process.stdout.write(
        `manifest: ${entries.length} images, ${files.length} derived files, ${stale.length} stale\n`,
      )
      if (stale.length > 0) process.exitCode = 1
    } else {
      for (const { file, expected } of stale) writeFileSync(join(root, file), expected)
      process.stdout.write(
        `manifest: ${entries.length} images, ${stale.length} of ${files.length} derived files written${stale.length > 0 ? `: ${stale.map(({ file }) => file).join(', ')}` : ''}\n`,
      )
    }
  }
} catch (error) {
  if (!(error instanceof ManifestError || error instanceof DerivedFileError)) throw error
  process.stderr.write(`${error.message}\n`)
  process.exitCode = 1
}
