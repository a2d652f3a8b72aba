// Writes dist/contracts.d.ts: the realtime types src/contracts.ts re-exports from @meridian/contracts, written out as
// plain TypeScript (TypeBox's Static<...> expanded by the compiler), so the packed SDK's types stand alone.
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const seamFile = join(packageDir, 'src', 'contracts.ts')
const outFile = join(packageDir, 'dist', 'contracts.d.ts')

const compilerOptions: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowImportingTsExtensions: true,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
}

/** The names src/contracts.ts re-exports, and the contracts' source file they come from. */
function seamExports(program: ts.Program): { names: string[]; source: ts.SourceFile } {
  const seam = program.getSourceFile(seamFile)
  if (!seam) throw new Error(`cannot read ${seamFile}`)
  const checker = program.getTypeChecker()
  const names: string[] = []
  let source: ts.SourceFile | undefined
  for (const statement of seam.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause || !statement.moduleSpecifier) continue
    if (!ts.isNamedExports(statement.exportClause)) continue
    for (const element of statement.exportClause.elements) {
      names.push(element.name.text)
      const symbol = checker.getExportSpecifierLocalTargetSymbol(element)
      const target = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      const declaration = target?.declarations?.[0]
      if (!declaration) throw new Error(`${element.name.text} is not exported by @meridian/contracts`)
      const file = declaration.getSourceFile()
      if (source && source !== file)
        throw new Error(`${element.name.text}: every re-export must come from one file`)
      source = file
    }
  }
  if (!source) throw new Error(`${seamFile} re-exports nothing`)
  return { names, source }
}

/** The declarations of `source`, by name. */
function declarationsOf(source: ts.SourceFile): Map<string, ts.Statement> {
  const declarations = new Map<string, ts.Statement>()
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
      declarations.set(statement.name.text, statement)
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) declarations.set(declaration.name.text, statement)
      }
    }
  }
  return declarations
}

/** The names of `source` a declaration printed as written refers to. */
function referencedNames(node: ts.Node, declarations: Map<string, ts.Statement>): string[] {
  const names: string[] = []
  const visit = (child: ts.Node) => {
    if (ts.isTypeReferenceNode(child) && ts.isIdentifier(child.typeName)) names.push(child.typeName.text)
    if (ts.isExpressionWithTypeArguments(child) && ts.isIdentifier(child.expression)) {
      names.push(child.expression.text)
    }
    if (ts.isTypeQueryNode(child) && ts.isIdentifier(child.exprName)) names.push(child.exprName.text)
    ts.forEachChild(child, visit)
  }
  ts.forEachChild(node, visit)
  return names.filter((name) => declarations.has(name))
}

const printFlags =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.InTypeAlias |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType

/**
 * One declaration as plain TypeScript: interfaces and generic aliases as written (they only name other
 * declarations), other aliases and constants as the compiler sees their type (which expands TypeBox's Static).
 */
function print(
  name: string,
  statement: ts.Statement,
  checker: ts.TypeChecker,
): { text: string; refersTo: ts.Node | undefined } {
  const docs = ts
    .getJSDocCommentsAndTags(statement)
    .map((doc) => doc.getText())
    .join('\n')
  const lead = docs ? `${docs}\n` : ''
  if (
    ts.isInterfaceDeclaration(statement) ||
    (ts.isTypeAliasDeclaration(statement) && statement.typeParameters)
  ) {
    return { text: `${lead}${statement.getText()}`, refersTo: statement }
  }
  if (ts.isTypeAliasDeclaration(statement)) {
    const type = checker.getTypeAtLocation(statement.name)
    return {
      text: `${lead}export type ${name} = ${checker.typeToString(type, undefined, printFlags)}`,
      refersTo: undefined,
    }
  }
  const declaration = (statement as ts.VariableStatement).declarationList.declarations.find(
    (candidate) => ts.isIdentifier(candidate.name) && candidate.name.text === name,
  )
  if (!declaration) throw new Error(`no declaration of ${name}`)
  const type = checker.getTypeAtLocation(declaration.name)
  return {
    text: `${lead}export declare const ${name}: ${checker.typeToString(type, undefined, printFlags)}`,
    refersTo: undefined,
  }
}

/** Type-checks the written declarations on their own: every name they use must be declared in them. */
function assertStandsAlone(text: string): void {
  const host = ts.createCompilerHost({ ...compilerOptions, lib: ['lib.es2023.d.ts'] })
  const readFile = host.readFile
  host.readFile = (file) => (file === outFile ? text : readFile(file))
  host.fileExists = (
    (fileExists) => (file: string) =>
      file === outFile || fileExists(file)
  )(host.fileExists)
  const program = ts.createProgram(
    [outFile],
    { ...compilerOptions, skipLibCheck: false, lib: ['lib.es2023.d.ts'] },
    host,
  )
  const diagnostics = ts.getPreEmitDiagnostics(program)
  if (diagnostics.length > 0) {
    throw new Error(ts.formatDiagnostics(diagnostics, { ...host, getNewLine: () => '\n' }))
  }
}

function main(): void {
  const program = ts.createProgram([seamFile], compilerOptions)
  const checker = program.getTypeChecker()
  const { names, source } = seamExports(program)
  const declarations = declarationsOf(source)
  const written = new Map<string, string>()
  const pending = [...names]
  while (pending.length > 0) {
    const name = pending.shift()!
    if (written.has(name)) continue
    const statement = declarations.get(name)
    if (!statement) throw new Error(`${name} is not declared in ${source.fileName}`)
    const { text, refersTo } = print(name, statement, checker)
    written.set(name, text)
    if (refersTo) pending.push(...referencedNames(refersTo, declarations))
  }
  const text = [
    "// The realtime channel's types, written out from @meridian/contracts when the SDK was built (build/contract-types.ts).",
    ...written.values(),
    '',
  ].join('\n\n')
  assertStandsAlone(text)
  writeFileSync(outFile, text)
}

main()
