// The repository documents itself: every relative link of its Markdown points at a file inside it (never outside the
// clone), and a link to a heading of a Markdown page finds that heading. First proved on a made-up page.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const skipped = new Set(['node_modules', '.git', 'dist', '.turbo', 'artifacts'])

function markdownFiles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skipped.has(entry.name)) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) markdownFiles(full, found)
    else if (entry.name.endsWith('.md')) found.push(full)
  }
  return found
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

const anchorsOf = (markdown: string): Set<string> =>
  new Set(
    markdown
      .replace(/```[\s\S]*?```/g, '')
      .split('\n')
      .flatMap((line) => {
        const heading = /^#{1,6} (.*)$/.exec(line)
        return heading?.[1] ? [anchorOf(heading[1])] : []
      }),
  )

interface BrokenLink {
  file: string
  link: string
  problem: string
}

/** The broken relative links of the page `file` (absolute path), whose text is `markdown`. */
export function brokenLinks(file: string, markdown: string, repositoryRoot: string): BrokenLink[] {
  const problems: BrokenLink[] = []
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = match[1] ?? ''
    if (/^[a-z]+:/i.test(link)) continue
    const [target = '', anchor] = link.split('#')
    const relative = path.relative(repositoryRoot, file)
    if (target === '') {
      if (anchor && !anchorsOf(markdown).has(anchor))
        problems.push({ file: relative, link, problem: 'no such heading' })
      continue
    }
    const resolved = path.resolve(path.dirname(file), target)
    if (path.relative(repositoryRoot, resolved).startsWith('..')) {
      problems.push({ file: relative, link, problem: 'points outside the repository' })
      continue
    }
    if (!existsSync(resolved)) {
      problems.push({ file: relative, link, problem: 'no such file' })
      continue
    }
    if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile()) {
      if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor))
        problems.push({ file: relative, link, problem: 'no such heading' })
    }
  }
  return problems
}

describe("the repository's documentation links", () => {
  it('when a page links outside the clone, to a missing file or to a missing heading, then each is reported', () => {
    const page = path.join(root, 'docs', 'explanation', 'made-up.md')
    const markdown =
      '# Made up\n\n## A heading\n\n[out](../../../shared/spec.md) [gone](nowhere.md) [here](#a-heading) ' +
      '[there](architecture.md#no-such-heading) [web](https://example.com) `[code](../x)`\n'
    expect(brokenLinks(page, markdown, root).map(({ link, problem }) => `${link}: ${problem}`)).toEqual([
      '../../../shared/spec.md: points outside the repository',
      'nowhere.md: no such file',
      'architecture.md#no-such-heading: no such heading',
    ])
  })

  it('when every Markdown page of the repository is read, then each of its relative links resolves inside it', () => {
    const pages = markdownFiles(root)
    expect(pages.length).toBeGreaterThan(10)
    const broken = pages.flatMap((file) => brokenLinks(file, readFileSync(file, 'utf8'), root))
    expect(broken).toEqual([])
  })
})
