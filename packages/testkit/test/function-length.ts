// Measures every function, method, arrow function and class of a TypeScript file with the compiler's own parser, so
// the ~180-line limit of STYLE.md ("split it into named pieces") is checked in code, not only stated in prose.
import ts from 'typescript'

/** A function or class over the limit, where it starts and how long it is. */
export interface LongDefinition {
  path: string
  line: number
  name: string
  lines: number
}

/** What a reader would call the definition: its own name, or the name it is assigned to. */
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = (node as { name?: ts.Node }).name
  if (named) return named.getText(source)
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const parent = node.parent
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  ) {
    return parent.name.getText(source)
  }
  return '(anonymous)'
}

/** Whether the node has a body of its own to measure (an overload or an interface's method has none). */
function isMeasured(node: ts.Node): boolean {
  if (ts.isClassLike(node)) return true
  return ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined
}

/**
 * Every function (declared, expressed or arrow), method, accessor, constructor and class of `text` longer than
 * `limit` lines, counted from its first token (comments above it are free) to its closing brace. Nested definitions
 * are measured on their own too, so splitting an outer function by nesting does not hide a long inner one.
 */
export function longDefinitions(path: string, text: string, limit: number): LongDefinition[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: LongDefinition[] = []
  const visit = (node: ts.Node): void => {
    if (isMeasured(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = last - first + 1
      if (lines > limit) found.push({ path, line: first + 1, name: nameOf(node, source), lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}
