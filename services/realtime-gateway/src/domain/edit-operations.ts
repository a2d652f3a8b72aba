// Edit operations on a document's text (spec: Real-time records, edit operation): an insert of text at a position, or
// a delete of a length from a position, checked against the content they apply to. Positions and lengths count
// UTF-16 code units, as JavaScript strings (and so every browser editor) index text. Pure: no I/O.
import type { EditOperation } from '@meridian/contracts'
import { documentContentMaxLength } from '@meridian/contracts'

export interface EditProblem {
  field: string
  message: string
}

export type EditOutcome = { ok: true; content: string } | { ok: false; problems: EditProblem[] }

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Whether `index` falls between the two halves of a surrogate pair (an edit there would split one character). */
const splitsSurrogatePair = (content: string, index: number): boolean =>
  index > 0 &&
  index < content.length &&
  /[\uD800-\uDBFF]/.test(content.charAt(index - 1)) &&
  /[\uDC00-\uDFFF]/.test(content.charAt(index))

/** The problems of an operation against `content`; none when it applies. */
export function problemsOf(
  content: string,
  operation: EditOperation,
  maxLength: number = documentContentMaxLength,
): EditProblem[] {
  const problems: EditProblem[] = []
  const { position } = operation
  if (operation.type === 'insert') {
    if (position > content.length) {
      problems.push({
        field: 'operation.position',
        message: `must be at most ${content.length} (the content's length) for an insert`,
      })
    } else if (splitsSurrogatePair(content, position)) {
      problems.push({ field: 'operation.position', message: 'must not split a character (a surrogate pair)' })
    }
    if (operation.text.includes('\u0000')) {
      problems.push({ field: 'operation.text', message: 'must not contain NUL (U+0000) characters' })
    }
    // stored as UTF-8, a lone surrogate would come back as U+FFFD: the stored text would differ from every client's
    if (loneSurrogate.test(operation.text)) {
      problems.push({ field: 'operation.text', message: 'must be well-formed text (no lone surrogate)' })
    }
    if (content.length + operation.text.length > maxLength) {
      problems.push({
        field: 'operation.text',
        message: `would make the document longer than ${maxLength} characters`,
      })
    }
    return problems
  }
  if (position + operation.length > content.length) {
    problems.push({
      field: 'operation.length',
      message: `position + length must be at most ${content.length} (the content's length) for a delete`,
    })
  } else if (
    splitsSurrogatePair(content, position) ||
    splitsSurrogatePair(content, position + operation.length)
  ) {
    problems.push({ field: 'operation.position', message: 'must not split a character (a surrogate pair)' })
  }
  return problems
}

/** The content once the operation is applied, or the problems that keep it from applying. */
export function applyOperation(
  content: string,
  operation: EditOperation,
  maxLength: number = documentContentMaxLength,
): EditOutcome {
  const problems = problemsOf(content, operation, maxLength)
  if (problems.length > 0) return { ok: false, problems }
  const { position } = operation
  const next =
    operation.type === 'insert'
      ? content.slice(0, position) + operation.text + content.slice(position)
      : content.slice(0, position) + content.slice(position + operation.length)
  return { ok: true, content: next }
}
