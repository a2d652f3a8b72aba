// Every regular expression in the code that serves requests (packages, services, apps, infra: not tests or benches)
// runs in linear time, as recheck's automaton checker proves it: a pattern applied to untrusted input must never let a
// request pin a core. Schema patterns are checked apart, with the chassis's validator (service-kit's
// linear-validation test). The check is first proved on a pattern known to backtrack.
import { fileURLToPath } from 'node:url'
import { checkSync } from 'recheck'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { scaledMs } from '../src/test-time.ts'
import { readRepository } from './import-boundaries.ts'

interface FoundPattern {
  /** repository-relative path and line */
  at: string
  source: string
  flags: string
}

/** Code that runs for clients; tests, test support (testkit included) and benches are left out. */
const servingCode = /^(packages|services|apps)\/[^/]+\/src\/|^infra\/src\//
const testSupport = /^packages\/testkit\//

/** Regular-expression literals and `RegExp('…')` / `new RegExp('…', 'flags')` with literal arguments in `text`. */
export function patternsIn(file: string, text: string): FoundPattern[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: FoundPattern[] = []
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const literalText = (node: ts.Expression | undefined) =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(source)
      const end = literal.lastIndexOf('/')
      found.push({ at: at(node), source: literal.slice(1, end), flags: literal.slice(end + 1) })
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const pattern = literalText(node.arguments?.[0])
      if (pattern !== undefined)
        found.push({ at: at(node), source: pattern, flags: literalText(node.arguments?.[1]) ?? '' })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * recheck's verdict with the pattern's own flags (a sticky pattern is anchored where it is applied). No time limit: on a
 * loaded machine its default 10 s ran out and the verdict came back `unknown`; the automaton checker's size limits bound
 * its work, so the verdict is the pattern's, not the machine's.
 */
const verdictOf = (pattern: { source: string; flags: string }) =>
  checkSync(pattern.source, pattern.flags, { checker: 'automaton', timeout: null })

describe('linear-time patterns in serving code', () => {
  it('when a file holds a backtracking pattern, then it is found and recheck calls it vulnerable', () => {
    const found = patternsIn(
      'services/x/src/a.ts',
      'const quadratic = /^(a|a)*b$/u\nconst built = new RegExp("^[^\\\\u0000]*[^\\\\u0000\\\\s][^\\\\u0000]*$", "u")\n',
    )
    expect(found.map(({ at, flags }) => ({ at, flags }))).toEqual([
      { at: 'services/x/src/a.ts:1', flags: 'u' },
      { at: 'services/x/src/a.ts:2', flags: 'u' },
    ])
    expect(found.map((pattern) => verdictOf(pattern).status)).toEqual(['vulnerable', 'vulnerable'])
  })

  it(
    'when every regular expression of the serving code is analysed, then each one runs in linear time',
    () => {
      const root = fileURLToPath(new URL('../../../', import.meta.url))
      const patterns = readRepository(root)
        .files.filter((file) => servingCode.test(file.path) && !testSupport.test(file.path))
        .flatMap((file) => patternsIn(file.path, file.text))
      expect(patterns.length).toBeGreaterThan(20)
      const unsafe = patterns.flatMap((pattern) => {
        const verdict = verdictOf(pattern)
        return verdict.status === 'safe' ? [] : [{ ...pattern, status: verdict.status }]
      })
      expect(unsafe).toEqual([])
      // Its own timeout, ten minutes as a hang guard: the automaton checker's work grows with every pattern added
      // (43 s of the suites' default 60 s on a slower machine, 78 s once the release tooling's patterns came), and
      // recheck runs synchronously, so the default only cut the run short after all of it was done.
    },
    scaledMs(600_000),
  )
})
