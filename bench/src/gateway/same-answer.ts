// Before measuring: do the three paths answer the same GET with the same 200 body? Otherwise they would do unequal
// work and the comparison would mean nothing.
import type { Target } from './gateway-report.ts'

export interface Answer {
  status: number
  contentType: string | null
  body: string
}

export async function fetchAnswer(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) })
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: await response.text(),
  }
}

/** What differs between the answers, compared with the first target's (the direct one); empty when all agree. */
export function answerProblems(answers: Partial<Record<Target, Answer>>): string[] {
  const entries = Object.entries(answers) as [Target, Answer][]
  const problems: string[] = []
  for (const [target, answer] of entries) {
    if (answer.status !== 200) problems.push(`${target}: status ${answer.status}, not 200`)
  }
  const [first, ...others] = entries
  if (!first) return problems
  for (const [target, answer] of others) {
    if (answer.body !== first[1].body) problems.push(`${target}: the body differs from ${first[0]}'s`)
    if (answer.contentType !== first[1].contentType)
      problems.push(
        `${target}: content-type '${answer.contentType}' differs from ${first[0]}'s '${first[1].contentType}'`,
      )
  }
  return problems
}
