// The textarea's changes as edit operations, applying them, and the caret under others' edits (src/collab-diff.ts).
import { describe, expect, it } from 'vitest'
import { applyOperation, caretAfter, operationsBetween } from '../src/collab-diff.ts'

/** Applies every operation in order: what the server would store. */
const replay = (text: string, operations: ReturnType<typeof operationsBetween>) =>
  operations.reduce(applyOperation, text)

describe('operationsBetween', () => {
  it('when nothing changed, then there is no operation', () => {
    expect(operationsBetween('same', 'same')).toEqual([])
  })

  it('when text is typed in the middle, then it is one insert at the caret', () => {
    expect(operationsBetween('Hello world', 'Hello, world')).toEqual([
      { type: 'insert', position: 5, text: ',' },
    ])
  })

  it('when text is typed into an empty document, then it is one insert at 0', () => {
    expect(operationsBetween('', 'abc')).toEqual([{ type: 'insert', position: 0, text: 'abc' }])
  })

  it('when characters are deleted, then it is one delete of their length', () => {
    expect(operationsBetween('Hello world', 'Hello')).toEqual([{ type: 'delete', position: 5, length: 6 }])
  })

  it('when a selection is replaced, then it is a delete then an insert at the same position', () => {
    const operations = operationsBetween('the red fox', 'the blue fox')
    expect(operations).toEqual([
      { type: 'delete', position: 4, length: 3 },
      { type: 'insert', position: 4, text: 'blue' },
    ])
    expect(replay('the red fox', operations)).toBe('the blue fox')
  })

  it('when a repeated letter is typed, then the result is the typed text whichever copy is named', () => {
    expect(replay('aa', operationsBetween('aa', 'aaa'))).toBe('aaa')
  })

  it('when an emoji replaces another sharing its high surrogate, then the pair is not split', () => {
    const before = 'x😀y'
    const after = 'x😁y'
    const operations = operationsBetween(before, after)
    expect(operations).toEqual([
      { type: 'delete', position: 1, length: 2 },
      { type: 'insert', position: 1, text: '😁' },
    ])
    expect(replay(before, operations)).toBe(after)
  })

  it('when an emoji is inserted before one sharing its low surrogate, then the insert is the whole character', () => {
    const before = 'a😀'
    const after = 'a🙀😀'
    const operations = operationsBetween(before, after)
    for (const operation of operations) {
      if (operation.type === 'insert') expect(operation.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/)
    }
    expect(replay(before, operations)).toBe(after)
  })
})

describe('caretAfter', () => {
  it('when someone inserts before the caret, then the caret moves by the inserted length', () => {
    expect(caretAfter(5, { type: 'insert', position: 2, text: 'abc' })).toBe(8)
  })

  it('when someone inserts at or after the caret, then the caret stays', () => {
    expect(caretAfter(5, { type: 'insert', position: 5, text: 'abc' })).toBe(5)
    expect(caretAfter(5, { type: 'insert', position: 9, text: 'abc' })).toBe(5)
  })

  it('when someone deletes before the caret, then the caret moves back by the deleted length', () => {
    expect(caretAfter(10, { type: 'delete', position: 2, length: 3 })).toBe(7)
  })

  it('when someone deletes a stretch around the caret, then the caret goes to where it began', () => {
    expect(caretAfter(5, { type: 'delete', position: 3, length: 6 })).toBe(3)
  })

  it('when someone deletes after the caret, then the caret stays', () => {
    expect(caretAfter(5, { type: 'delete', position: 5, length: 2 })).toBe(5)
  })
})
