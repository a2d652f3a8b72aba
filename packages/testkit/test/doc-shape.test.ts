// The documentation's shape, checked rather than hoped for: its pages sorted into the four kinds (tutorials, how-to,
// reference, explanation), every long stretch of prose broken by a heading a reader can link to, and the prose in
// the project's own voice — no citation of a document the repository does not hold ("the spec"), no first-person
// narration, no names of the work items the pages were written in. Code blocks and inline code are not prose and are
// not read. First proved on a made-up page.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const docs = path.join(root, 'docs')

/** The four kinds of page (Diátaxis), one folder each; docs/ itself holds no page. */
export const kinds = ['tutorials', 'how-to', 'reference', 'explanation'] as const

/** The longest stretch of prose, in words, a page may run without a heading. */
export const wordsBetweenHeadings = 400

/** Words of first-person narration: the pages speak of Meridian, the reader and the operator, not of their authors. */
const firstPerson = new Set([
  'we',
  "we're",
  "we've",
  "we'll",
  "we'd",
  'our',
  'ours',
  'ourselves',
  'us',
  "let's",
])

/** Phrases of the authors' sandbox: a citation of no document, work items, the authors' own machine. */
const sandboxPhrases = [
  'the spec',
  // a work item by its number: "issue 41", "issue 4"
  ...Array.from({ length: 9 }, (_, digit) => `issue ${digit + 1}`),
  'work item',
  'hostile review',
  'the review',
  'this review',
  'this session',
  'this machine',
  'made us',
]

/**
 * Pages allowed a finding, each with the reason: keyed by the page's path from the root, then the finding as the
 * check words it (`line 12: first person "we"`). Empty today; an entry names why the words are genuine (a quoted
 * message, a product's own name), never that they were left for later.
 */
export const allowed: Record<string, Record<string, string>> = {}

interface Line {
  number: number
  text: string
}

/** The prose lines of a Markdown page: fenced code blocks left out, inline code spans blanked. */
export function proseLines(markdown: string): Line[] {
  const lines: Line[] = []
  let inFence = false
  markdown.split('\n').forEach((raw, index) => {
    if (raw.trimStart().startsWith('```')) {
      inFence = !inFence
      return
    }
    if (inFence) return
    const pieces = raw.split('`')
    // the even pieces are outside code spans (an unclosed span leaves the rest of the line as code)
    const text = pieces.filter((_, piece) => piece % 2 === 0).join(' ')
    lines.push({ number: index + 1, text })
  })
  return lines
}

const isHeading = (text: string): boolean => {
  const hashes = text.length - text.replace(/^#+/, '').length
  return hashes >= 1 && hashes <= 6 && text.charAt(hashes) === ' '
}

const wordsOf = (text: string): string[] => text.split(/\s+/).filter((word) => word !== '')

/** Stretches of prose (table rows not counted) longer than `limit` words without a heading: the line each starts on. */
export function longStretches(markdown: string, limit = wordsBetweenHeadings): string[] {
  const found: string[] = []
  let words = 0
  let start = 1
  let reported = false
  for (const line of proseLines(markdown)) {
    if (isHeading(line.text)) {
      words = 0
      start = line.number + 1
      reported = false
      continue
    }
    if (line.text.trimStart().startsWith('|')) continue
    words += wordsOf(line.text).length
    if (words > limit && !reported) {
      found.push(`over ${limit} words without a heading from line ${start}`)
      reported = true
    }
  }
  return found
}

/** Findings of voice: first-person words and the sandbox's phrases, each with its line. */
export function voiceFindings(markdown: string): string[] {
  const found: string[] = []
  for (const line of proseLines(markdown)) {
    const lower = line.text.toLowerCase()
    for (const word of line.text.split(/[^\p{L}']+/u)) {
      // "US" in capitals is the country, not the authors
      if (word !== 'US' && firstPerson.has(word.toLowerCase()))
        found.push(`line ${line.number}: first person "${word}"`)
    }
    for (const phrase of sandboxPhrases) {
      const at = lower.indexOf(phrase)
      // a phrase counts as a whole word: "the specification" or "issue 12345-x" inside a URL are not the sandbox's
      const after = lower.charAt(at + phrase.length)
      if (at !== -1 && !/[a-z]/.test(after)) found.push(`line ${line.number}: "${phrase}"`)
    }
  }
  return found
}

function pagesUnder(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) pagesUnder(full, found)
    else if (entry.name.endsWith('.md')) found.push(full)
  }
  return found
}

/** Every finding of a page, but those allowed for it. */
function findingsOf(file: string): string[] {
  const relative = path.relative(root, file)
  const markdown = readFileSync(file, 'utf8')
  const findings = [...voiceFindings(markdown)]
  if (relative.startsWith(`docs${path.sep}`)) findings.push(...longStretches(markdown))
  const exceptions = allowed[relative] ?? {}
  return findings
    .filter((finding) => !Object.hasOwn(exceptions, finding))
    .map((finding) => `${relative}: ${finding}`)
}

describe("the documentation's shape", () => {
  it('when a made-up page is read, then its long stretches, first person and sandbox phrases are reported, and code is not', () => {
    const filler = 'word '.repeat(401)
    const markdown = [
      '# Made up',
      '',
      filler,
      '',
      '## Short',
      '',
      'We measured it on this machine, as the spec says (issue 41). The US east region is fine.',
      '',
      '```bash',
      `# we and our code are not prose: ${filler}`,
      '```',
      '',
      'Inline `we ran it` is code too; the specification and "issue" alone are words.',
    ].join('\n')
    expect(longStretches(markdown)).toEqual(['over 400 words without a heading from line 2'])
    expect(voiceFindings(markdown)).toEqual([
      'line 7: first person "We"',
      'line 7: "the spec"',
      'line 7: "issue 4"',
      'line 7: "this machine"',
    ])
  })

  it('when docs/ is listed, then it holds the four kinds of page, each a folder with pages, and no page of its own', () => {
    for (const kind of kinds) {
      const folder = path.join(docs, kind)
      expect(existsSync(folder) && statSync(folder).isDirectory(), `docs/${kind}/`).toBe(true)
      expect(
        readdirSync(folder).filter((name) => name.endsWith('.md')).length,
        `pages in docs/${kind}/`,
      ).toBeGreaterThan(0)
    }
    expect(readdirSync(docs).filter((name) => name.endsWith('.md'))).toEqual([])
  })

  it('when every page of docs/ and the READMEs of the root, services/ and bench/ are read, then each keeps the shape and the voice', () => {
    const pages = [
      ...pagesUnder(docs),
      ...['README.md', 'services/README.md', 'bench/README.md'].map((page) => path.join(root, page)),
    ]
    expect(pages.length).toBeGreaterThan(20)
    expect(pages.flatMap(findingsOf)).toEqual([])
  })
})
