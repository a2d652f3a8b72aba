// A document's text as edit operations (spec: Real-time records, edit operation): what a change typed into a textarea
// is as a delete and/or an insert, applying an operation, and where a caret goes when someone else's operation lands.
// Positions count UTF-16 code units, as the server's do; a surrogate pair is never split. Pure: no DOM, no I/O.
import type { EditOperation } from '@meridian/contracts'

const isHighSurrogate = (text: string, index: number) => /[\uD800-\uDBFF]/.test(text.charAt(index))
const isLowSurrogate = (text: string, index: number) => /[\uDC00-\uDFFF]/.test(text.charAt(index))

/**
 * The operations that turn `before` into `after`: the one changed stretch between their common start and common
 * end, as a delete of what was there (first) and an insert of what is there now, at the same position. None when
 * they are equal.
 */
export function operationsBetween(before: string, after: string): EditOperation[] {
  const shorter = Math.min(before.length, after.length)
  let start = 0
  while (start < shorter && before[start] === after[start]) start++
  // never end the common start between the two halves of a character
  if (start > 0 && isHighSurrogate(before, start - 1)) start--
  let end = 0
  while (end < shorter - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++
  // nor begin the common end there
  if (end > 0 && isLowSurrogate(before, before.length - end)) end--

  const operations: EditOperation[] = []
  const removed = before.length - start - end
  const inserted = after.slice(start, after.length - end)
  if (removed > 0) operations.push({ type: 'delete', position: start, length: removed })
  if (inserted.length > 0) operations.push({ type: 'insert', position: start, text: inserted })
  return operations
}

/** The text once `operation` is applied (the caller knows it fits: it came from the server or from this text). */
export function applyOperation(text: string, operation: EditOperation): string {
  const { position } = operation
  return operation.type === 'insert'
    ? text.slice(0, position) + operation.text + text.slice(position)
    : text.slice(0, position) + text.slice(position + operation.length)
}

/**
 * Where a caret (or a selection's end) at `caret` is once someone else's `operation` is applied: it moves with the
 * text before it; an insert exactly at the caret lands after it, so the writer's next key stays where they were.
 */
export function caretAfter(caret: number, operation: EditOperation): number {
  if (operation.type === 'insert') return operation.position < caret ? caret + operation.text.length : caret
  if (caret <= operation.position) return caret
  return Math.max(operation.position, caret - operation.length)
}
