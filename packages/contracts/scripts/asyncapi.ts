// Writes the AsyncAPI document these contracts generate to docs/asyncapi.json; with --release, also makes it the
// released baseline (docs/asyncapi.released.json) that the schema-compatibility check compares with.
import { writeFileSync } from 'node:fs'
import { asyncApiDocument, asyncApiText } from '../src/asyncapi.ts'

const docs = new URL('../../../docs/', import.meta.url)
const text = asyncApiText(asyncApiDocument())
writeFileSync(new URL('asyncapi.json', docs), text)
process.stdout.write('wrote docs/asyncapi.json\n')
if (process.argv.includes('--release')) {
  writeFileSync(new URL('asyncapi.released.json', docs), text)
  process.stdout.write('wrote docs/asyncapi.released.json (the baseline of the schema-compatibility check)\n')
}
