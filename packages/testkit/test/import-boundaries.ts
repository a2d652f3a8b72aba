// Reads the import specifiers of the repository's TypeScript files and judges them by a table of rules, so the
// dependency direction docs/explanation/architecture.md describes ("What depends on what") is checked in code, not only stated in prose.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

/** What a workspace is, by the folder it sits in; anything outside packages/ and services/ (bench, infra) is tooling. */
export type WorkspaceKind = 'package' | 'service' | 'tooling'

const kindByParent: Readonly<Record<string, WorkspaceKind>> = { packages: 'package', services: 'service' }

/** Our package names; an import of one of these is ours even when no workspace has it (yet). */
const ourScope = '@meridian/'

export interface Workspace {
  /** the package name, e.g. @meridian/auth */
  name: string
  /** its folder, relative to the repository root, with / separators */
  dir: string
  kind: WorkspaceKind
}

/** One end of an import: the workspace it falls in, if any, and the path inside it (repository-relative outside). */
export interface Place {
  workspace: Workspace | undefined
  path: string
}

/** Which end of an import a rule looks at; every field given must hold. */
export interface Side {
  kind?: WorkspaceKind
  /** a package name */
  workspace?: string
  /** a folder inside the workspace, ending in /, or a file; several: any one of them */
  under?: string | readonly string[]
}

/** A forbidden import: from a file matching `from` to anything of ours matching `to`. */
export interface Rule {
  /** what a report of it says */
  rule: string
  from: Side
  to: Side
  /** 'same': only imports within one workspace; 'other': only imports leaving it (a path outside every workspace too) */
  between?: 'same' | 'other'
  /** imports the rule lets through: from a file matching `from` to one matching `to` */
  except?: { from: Side; to: Side }
}

export interface RepositoryFile {
  /** relative to the repository root, with / separators */
  path: string
  text: string
}

export interface Repository {
  root: string
  workspaces: Workspace[]
  files: RepositoryFile[]
}

export interface ImportSite {
  specifier: string
  line: number
}

export function workspaceAt(dir: string, name: string): Workspace {
  const parent = dir.includes('/') ? dir.slice(0, dir.indexOf('/')) : ''
  return { name, dir, kind: kindByParent[parent] ?? 'tooling' }
}

/**
 * Every module specifier of a file, by TypeScript's own pre-processor (its scanner, so text in comments, strings and
 * templates is never mistaken for an import): static imports and `import type`, `export … from`, side-effect
 * imports, `import()` and `require()` with a string literal, `import x = require()`, module augmentations.
 */
export function importsOf(text: string): ImportSite[] {
  const { importedFiles } = ts.preProcessFile(text, true, true)
  return importedFiles
    .filter((found) => !isConcatenated(text, found.pos))
    .sort((a, b) => a.pos - b.pos)
    .map((found) => ({ specifier: found.fileName, line: lineAt(text, found.pos) }))
}

/** Reads the tokens at an import's literal; trivia skipped, so comments and line breaks between them do not count. */
const tokens = ts.createScanner(ts.ScriptTarget.Latest, true)

/**
 * Whether the literal that starts at `start` goes on with `+`: the pre-processor takes the first literal of
 * `import('./x-' + name)` for the module, but a computed name cannot be judged.
 */
function isConcatenated(text: string, start: number): boolean {
  tokens.setText(text, start)
  tokens.scan()
  return tokens.scan() === ts.SyntaxKind.PlusToken
}

function lineAt(text: string, position: number): number {
  let line = 1
  for (let at = text.indexOf('\n'); at !== -1 && at < position; at = text.indexOf('\n', at + 1)) line += 1
  return line
}

function placeOf(repositoryPath: string, workspaces: readonly Workspace[]): Place {
  // the deepest folder wins, should one workspace ever sit inside another
  const workspace = workspaces
    .filter(({ dir }) => repositoryPath === dir || repositoryPath.startsWith(`${dir}/`))
    .sort((a, b) => b.dir.length - a.dir.length)[0]
  if (!workspace) return { workspace: undefined, path: repositoryPath }
  return { workspace, path: path.posix.relative(workspace.dir, repositoryPath) }
}

/** Where a specifier points, or undefined when it is not ours (node:*, npm packages). */
function targetOf(repository: Repository, fromPath: string, specifier: string): Place | undefined {
  if (specifier.startsWith('.')) {
    return placeOf(path.posix.join(path.posix.dirname(fromPath), specifier), repository.workspaces)
  }
  if (path.isAbsolute(specifier)) {
    const relative = path.relative(repository.root, specifier).split(path.sep).join('/')
    return placeOf(relative, repository.workspaces)
  }
  if (!specifier.startsWith(ourScope)) return undefined
  const [scope = '', name = '', ...subpath] = specifier.split('/')
  const workspace = repository.workspaces.find((candidate) => candidate.name === `${scope}/${name}`)
  // a package's subpath goes through its exports map, which is not followed: no rule looks inside another package
  return { workspace, path: workspace ? subpath.join('/') : specifier }
}

function holds(side: Side, at: Place): boolean {
  if (side.kind !== undefined && at.workspace?.kind !== side.kind) return false
  if (side.workspace !== undefined && at.workspace?.name !== side.workspace) return false
  if (side.under === undefined) return true
  const folders: readonly string[] = typeof side.under === 'string' ? [side.under] : side.under
  return (
    at.workspace !== undefined &&
    folders.some((folder) => (folder.endsWith('/') ? `${at.path}/`.startsWith(folder) : at.path === folder))
  )
}

function breaks(rule: Rule, from: Place, to: Place): boolean {
  const same = from.workspace !== undefined && from.workspace === to.workspace
  if (rule.between === 'same' && !same) return false
  if (rule.between === 'other' && same) return false
  if (rule.except && holds(rule.except.from, from) && holds(rule.except.to, to)) return false
  return holds(rule.from, from) && holds(rule.to, to)
}

/** Every import that breaks a rule, as `file:line imports X (rule)`; one line per rule it breaks. */
export function findViolations(repository: Repository, rules: readonly Rule[]): string[] {
  const violations: string[] = []
  for (const file of repository.files) {
    const from = placeOf(file.path, repository.workspaces)
    for (const { specifier, line } of importsOf(file.text)) {
      const to = targetOf(repository, file.path, specifier)
      if (!to) continue
      for (const rule of rules) {
        if (breaks(rule, from, to))
          violations.push(`${file.path}:${line} imports ${specifier} (${rule.rule})`)
      }
    }
  }
  return violations
}

/** The file a relative specifier names, when the repository has it: as written, `.js` for `.ts`, or a folder's index. */
function fileOf(paths: ReadonlySet<string>, fromPath: string, specifier: string): string | undefined {
  const joined = path.posix.join(path.posix.dirname(fromPath), specifier)
  return [joined, joined.replace(/\.([cm]?)js$/, '.$1ts'), `${joined}.ts`, `${joined}/index.ts`].find(
    (candidate) => paths.has(candidate),
  )
}

/** One import of the graph: the file imported and the line of the importing file that names it. */
interface Edge {
  to: string
  line: number
}

/**
 * Each file's relative imports of files in its own workspace, `import type` included: a cycle of types is erased at
 * run time, but it is the same knot to a reader, who cannot learn either file first.
 */
function importGraph(repository: Repository): Map<string, Edge[]> {
  const paths = new Set(repository.files.map(({ path }) => path))
  const graph = new Map<string, Edge[]>()
  for (const file of repository.files) {
    const workspace = placeOf(file.path, repository.workspaces).workspace
    const edges: Edge[] = []
    for (const { specifier, line } of importsOf(file.text)) {
      if (!specifier.startsWith('.')) continue
      const to = fileOf(paths, file.path, specifier)
      if (to && placeOf(to, repository.workspaces).workspace === workspace) edges.push({ to, line })
    }
    graph.set(file.path, edges)
  }
  return graph
}

/** The strongly connected groups of the graph with more than one file, or one file importing itself (Tarjan). */
function knots(graph: ReadonlyMap<string, readonly Edge[]>): string[][] {
  const order = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string): void => {
    order.set(file, order.size)
    lowest.set(file, order.get(file) ?? 0)
    stack.push(file)
    onStack.add(file)
    for (const { to } of graph.get(file) ?? []) {
      if (!order.has(to)) {
        visit(to)
        lowest.set(file, Math.min(lowest.get(file) ?? 0, lowest.get(to) ?? 0))
      } else if (onStack.has(to)) {
        lowest.set(file, Math.min(lowest.get(file) ?? 0, order.get(to) ?? 0))
      }
    }
    if (lowest.get(file) !== order.get(file)) return
    const group: string[] = []
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member)
      group.push(member)
      if (member === file) break
    }
    if (group.length > 1 || graph.get(file)?.some(({ to }) => to === file)) found.push(group.sort())
  }
  // depth is bounded by the number of files in one workspace (a few hundred), far below the call stack's limit
  for (const file of [...graph.keys()].sort()) if (!order.has(file)) visit(file)
  return found.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''))
}

/** The shortest way round a knot from its first file back to it, each step with the line that imports the next. */
function cycleThrough(group: readonly string[], graph: ReadonlyMap<string, readonly Edge[]>): string {
  const members = new Set(group)
  const start = group[0] ?? ''
  const cameFrom = new Map<string, { file: string; line: number }>()
  const queue = [start]
  for (let at = 0; at < queue.length; at += 1) {
    const file = queue[at] ?? ''
    for (const { to, line } of graph.get(file) ?? []) {
      if (!members.has(to) || cameFrom.has(to)) continue
      cameFrom.set(to, { file, line })
      if (to === start) break
      queue.push(to)
    }
    if (cameFrom.has(start)) break
  }
  // walking back from the start's importer ends at the start, the search's root
  const steps: string[] = []
  let at = start
  do {
    const step = cameFrom.get(at)
    if (!step) break
    steps.unshift(`${step.file}:${step.line}`)
    at = step.file
  } while (at !== start)
  return [...steps, start].join(' -> ')
}

/**
 * Every import cycle inside a workspace, as `a.ts:3 -> b.ts:7 -> a.ts (rule)`: the files in the order they import
 * each other, each with the line that imports the next. One cycle is named per knot; break it and the next shows.
 */
export function findCycles(repository: Repository, rule: string): string[] {
  const graph = importGraph(repository)
  return knots(graph).map((group) => `${cycleThrough(group, graph)} (${rule})`)
}

/** Folders never read: installed, built or generated, and dot folders (.git, .turbo). */
const notOurs = new Set(['node_modules', 'dist', 'coverage'])
/** ./scripts/build's output at the root: build/<name>/package.json would pass for a workspace */
const notOursAtRoot = new Set(['build'])
const typeScriptFile = /\.[cm]?tsx?$/

function* filesUnder(root: string, dir = ''): Generator<string> {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (entry.name.startsWith('.') || notOurs.has(entry.name)) continue
    if (dir === '' && notOursAtRoot.has(entry.name)) continue
    const relative = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) yield* filesUnder(root, relative)
    else if (entry.isFile()) yield relative
  }
}

/**
 * The repository as the rules see it. A workspace is a folder with a package.json one or two levels down (bench,
 * packages/db, services/auth), so a new service is covered the moment it exists; deeper package.json files are
 * fixtures, not workspaces.
 */
export function readRepository(root: string): Repository {
  const workspaces: Workspace[] = []
  const files: RepositoryFile[] = []
  for (const file of filesUnder(root)) {
    const dir = path.posix.dirname(file)
    if (path.posix.basename(file) === 'package.json' && dir !== '.' && dir.split('/').length <= 2) {
      const { name } = JSON.parse(readFileSync(path.join(root, file), 'utf8')) as { name?: string }
      if (name) workspaces.push(workspaceAt(dir, name))
    } else if (typeScriptFile.test(file)) {
      files.push({ path: file, text: readFileSync(path.join(root, file), 'utf8') })
    }
  }
  return { root, workspaces, files }
}
