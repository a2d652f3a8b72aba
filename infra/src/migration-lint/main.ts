// ./scripts/lint-migrations [file...]: squawk over every migration (or these files), exit 1 on a finding that is not
// ignored in its file nor accepted as pre-release, or on a pre-release exception nothing matches any more.
import { fileURLToPath } from 'node:url'
import { lintMigrations } from './lint.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const files = process.argv.slice(2)
const result = await lintMigrations({ root, ...(files.length > 0 ? { files } : {}) })

for (const finding of result.violations) {
  process.stderr.write(`${finding.file}:${finding.line}: ${finding.rule}: ${finding.message}\n`)
}
for (const { file, rule } of result.staleExceptions) {
  process.stderr.write(
    `${file}: ${rule} is accepted in infra/src/migration-lint/pre-release.ts but no longer reported: remove it\n`,
  )
}
const failed = result.violations.length > 0 || result.staleExceptions.length > 0
process.stdout.write(
  `migrations: ${result.files.length} files linted by squawk, ${result.violations.length} findings, ` +
    `${result.accepted.length} accepted as pre-release${failed ? '' : ', ok'}\n`,
)
if (failed) {
  process.stderr.write(
    'a finding is fixed in the migration, or ignored there with `-- squawk-ignore <rule>` and the reason on the ' +
      "line before (docs/how-to/releasing.md, 'Migrations')\n",
  )
  process.exitCode = 1
}
