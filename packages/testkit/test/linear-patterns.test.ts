// Every regular expression in the code that serves requests (packages, services, apps, infra: not tests or benches)
// runs in linear time, as recheck's automaton checker proves it: a pattern applied to untrusted input must never let a
// request pin a core. Schema patterns are checked apart, with the chassis's validator (service-kit's
// linear-validation test). The check is first proved on a pattern known to backtrack.
import { fileURLToPath } from 'node:url'
import { check } from 'recheck'
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
 * its work, so the verdict is the pattern's, not the machine's. The native backend (recheck's own binary, installed with
 * it for this platform) gives the same checker's verdict as the JavaScript build in a fraction of the CPU: the serving
 * code's patterns took 144 s of a CI run's core with `checkSync`, about 30 s this way.
 */
const verdictOf = (pattern: { source: string; flags: string }) => {
  // recheck reads its backend from the environment; "native" fails if the binary is missing rather than falling back
  process.env.RECHECK_BACKEND = 'native'
  return check(pattern.source, pattern.flags, { checker: 'automaton', timeout: null })
}

describe('linear-time patterns in serving code', () => {
  it('when a file holds a backtracking pattern, then it is found and recheck calls it vulnerable', async () => {
    const found = patternsIn(
      'services/x/src/a.ts',
      'const quadratic = /^(a|a)*b$/u\nconst built = new RegExp("^[^\\\\u0000]*[^\\\\u0000\\\\s][^\\\\u0000]*$", "u")\n',
    )
    expect(found.map(({ at, flags }) => ({ at, flags }))).toEqual([
      { at: 'services/x/src/a.ts:1', flags: 'u' },
      { at: 'services/x/src/a.ts:2', flags: 'u' },
    ])
    const verdicts = await Promise.all(found.map(verdictOf))
    expect(verdicts.map((verdict) => verdict.status)).toEqual(['vulnerable', 'vulnerable'])
  })

  it(
    'when every regular expression of the serving code is analysed, then each one runs in linear time',
    async () => {
      const root = fileURLToPath(new URL('../../../', import.meta.url))
      const patterns = readRepository(root)
        .files.filter((file) => servingCode.test(file.path) && !testSupport.test(file.path))
        .flatMap((file) => patternsIn(file.path, file.text))
      expect(patterns.length).toBeGreaterThan(20)
      // one verdict per pattern and flags, however many places write it (the same pattern, the same automaton)
      const places = new Map<string, FoundPattern[]>()
      for (const pattern of patterns) {
        const key = `${pattern.flags}/${pattern.source}`
        places.set(key, [...(places.get(key) ?? []), pattern])
      }
      const unsafe: (FoundPattern & { status: string })[] = []
      for (const written of places.values()) {
        const verdict = await verdictOf(written[0] as FoundPattern)
        if (verdict.status !== 'safe')
          unsafe.push(...written.map((pattern) => ({ ...pattern, status: verdict.status })))
      }
      expect(unsafe).toEqual([])
      // Its own timeout, ten minutes as a hang guard: the automaton checker's work grows with every pattern added.
    },
    scaledMs(600_000),
  )
})
