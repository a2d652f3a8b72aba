// The how-tos that say they are pasted (docs/how-to/*.md with `<!-- how-to: … -->` lines) are performed as written: on
// a scratch copy of the repository (this commit's files unpacked in the cache folder and installed, infra's
// checkoutTree), each marked block in order — inserted before or after the one line it names in the file it names, or
// run with bash at the copy's root — and the page's last `run` block is its checks. A page whose steps no longer fit
// the code (a line renamed, a command gone) fails here, naming the step.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { layoutFromEnv, repoRoot, run } from '@meridian/infra'
import { checkoutTree } from '@meridian/infra/release-checkout'
import { describe, expect, it } from 'vitest'
import { scaledMs } from '../src/test-time.ts'

type Step =
  | { kind: 'insert'; where: 'before' | 'after'; anchor: string; file: string; text: string }
  | { kind: 'run'; text: string }

const marker = /<!-- how-to: (.+?) -->\n```[a-z]*\n([\s\S]*?)\n```\n/g
const insertion = /^insert (before|after) "(.+)" in (\S+)$/

/** The marked steps of a page, in order; an unknown marker is an error naming it. */
function stepsOf(page: string): Step[] {
  return [...page.matchAll(marker)].map(([, instruction = '', text = '']) => {
    if (instruction === 'run') return { kind: 'run', text }
    const match = insertion.exec(instruction)
    if (!match) throw new Error(`not a how-to step: <!-- how-to: ${instruction} -->`)
    return {
      kind: 'insert',
      where: match[1] as 'before' | 'after',
      anchor: match[2] as string,
      file: match[3] as string,
      text,
    }
  })
}

/** `text` inserted before or after the one line of `source` that is `anchor`; none or two such lines are an error. */
function inserted(source: string, step: Extract<Step, { kind: 'insert' }>): string {
  const lines = source.split('\n')
  const at = lines.flatMap((line, index) => (line.trimEnd() === step.anchor ? [index] : []))
  if (at.length !== 1)
    throw new Error(
      `${step.file}: ${at.length === 0 ? 'no' : at.length} line(s) "${step.anchor}" (one expected)`,
    )
  const index = (at[0] as number) + (step.where === 'after' ? 1 : 0)
  return [...lines.slice(0, index), ...step.text.split('\n'), ...lines.slice(index)].join('\n')
}

const howTos = join(repoRoot, 'docs', 'how-to')
const pasted = readdirSync(howTos)
  .filter((name) => name.endsWith('.md'))
  .map((name) => ({ name, steps: stepsOf(readFileSync(join(howTos, name), 'utf8')) }))
  .filter((page) => page.steps.length > 0)

describe('the how-tos performed as written', () => {
  it('when a step is read, then a block goes before or after the one line it names, and a line missing or twice is refused', () => {
    const page =
      '<!-- how-to: insert after "b" in x.ts -->\n```ts\nafter\n```\n<!-- how-to: run -->\n```bash\ntrue\n```\n'
    const [insert, runStep] = stepsOf(page)
    expect(runStep).toEqual({ kind: 'run', text: 'true' })
    if (insert?.kind !== 'insert') throw new Error('not an insertion')
    expect(inserted('a\nb\nc', insert)).toBe('a\nb\nafter\nc')
    expect(inserted('a\nb\nc', { ...insert, where: 'before' })).toBe('a\nafter\nb\nc')
    expect(() => inserted('a\nc', insert)).toThrow('x.ts: no line(s) "b" (one expected)')
    expect(() => inserted('b\nb', insert)).toThrow('x.ts: 2 line(s) "b" (one expected)')
    expect(() => stepsOf('<!-- how-to: paste it somewhere -->\n```ts\nx\n```\n')).toThrow(
      'not a how-to step: <!-- how-to: paste it somewhere -->',
    )
  })

  it('when docs/how-to is read, then at least the page adding an event type is pasted, ending with its checks', () => {
    expect(pasted.map((page) => page.name)).toContain('add-an-event-type.md')
    for (const page of pasted) expect(page.steps.at(-1)?.kind, page.name).toBe('run')
  })

  for (const page of pasted) {
    it(
      `when docs/how-to/${page.name} is followed on a copy of the repository, then every step applies and its checks pass`,
      async () => {
        const commit = (await run('git', ['rev-parse', 'HEAD'], { cwd: repoRoot })).trim()
        const dir = join(layoutFromEnv().componentDir('how-to'), page.name.replace(/\.md$/, ''))
        // a fresh copy each time: the last one holds the last run's steps
        rmSync(dir, { recursive: true, force: true })
        await checkoutTree({ commit, dir, label: `docs/how-to/${page.name}` })
        for (const [index, step] of page.steps.entries()) {
          const what = `step ${index + 1} of docs/how-to/${page.name}`
          if (step.kind === 'insert') {
            const file = join(dir, step.file)
            writeFileSync(file, inserted(readFileSync(file, 'utf8'), step))
          } else {
            await run('bash', ['-euo', 'pipefail', '-c', step.text], { cwd: dir }).catch((error: Error) => {
              throw new Error(`${what} (${step.text.split('\n').join('; ')}) failed: ${error.message}`)
            })
          }
        }
      },
      scaledMs(600_000),
    )
  }
})
