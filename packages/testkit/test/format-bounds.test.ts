// Every string schema with a format that code outside contracts writes (`Type.String({ format: 'uuid' })` in a
// service's route) has a maxLength, as contracts' own have: a field accepts no more than its format needs. Contracts'
// schemas are judged where the released event baseline is known (service-kit's linear-validation test). The check is
// first proved on a made-up file.
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { readRepository } from './import-boundaries.ts'

/** Code that builds schemas: every workspace's src/, contracts' apart. */
const schemaCode = /^(packages|services|apps)\/[^/]+\/src\/|^infra\/src\//
const contracts = /^packages\/contracts\//

/** `Type.String({...})` calls whose options name a format and no maxLength, as file:line. */
export function unboundedFormatsIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'String' &&
      node.arguments[0] &&
      ts.isObjectLiteralExpression(node.arguments[0])
    ) {
      const names = node.arguments[0].properties.map((property) =>
        property.name && (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name))
          ? property.name.text
          : undefined,
      )
      // a spread may or may not bring a maxLength: it cannot be judged, so it must be written out
      const spread = node.arguments[0].properties.some(ts.isSpreadAssignment)
      if (names.includes('format') && (spread || !names.includes('maxLength')))
        found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('bounded format strings outside contracts', () => {
  it('when a file builds format strings with and without maxLength, then those without are found by line', () => {
    const text = [
      "const Params = Type.Object({ id: Type.String({ format: 'uuid' }) })",
      "const Bounded = Type.String({ format: 'uuid', maxLength: 36 })",
      "const Spread = Type.String({ ...base, format: 'date-time' })",
      'const Plain = Type.String({ minLength: 1 })',
      "const Quoted = Type.String({ 'format': 'email', description: 'x' })",
    ].join('\n')
    expect(unboundedFormatsIn('services/x/src/routes/a.ts', text)).toEqual([
      'services/x/src/routes/a.ts:1',
      'services/x/src/routes/a.ts:3',
      'services/x/src/routes/a.ts:5',
    ])
  })

  it('when every workspace source outside contracts is read, then each string with a format has a maxLength', () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url))
    const files = readRepository(root).files.filter(
      (file) => schemaCode.test(file.path) && !contracts.test(file.path),
    )
    expect(files.length).toBeGreaterThan(100)
    expect(files.flatMap((file) => unboundedFormatsIn(file.path, file.text))).toEqual([])
  })
})
