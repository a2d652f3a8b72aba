// The edit operations' pure rules: inserts and deletes at the bounds of the content, positions past it, the size
// limit, and text that cannot be stored as it is.
import { describe, expect, it } from 'vitest'
import { applyOperation, problemsOf } from '../src/domain/edit-operations.ts'

describe('insert', () => {
  it('when text is inserted at the start, in the middle or at the end, then it lands there', () => {
    expect(applyOperation('hello', { type: 'insert', position: 0, text: '>' })).toEqual({
      ok: true,
      content: '>hello',
    })
    expect(applyOperation('hello', { type: 'insert', position: 2, text: '--' })).toEqual({
      ok: true,
      content: 'he--llo',
    })
    expect(applyOperation('hello', { type: 'insert', position: 5, text: '!' })).toEqual({
      ok: true,
      content: 'hello!',
    })
    expect(applyOperation('', { type: 'insert', position: 0, text: 'first' })).toEqual({
      ok: true,
      content: 'first',
    })
  })

  it('when the position is past the end, then it is refused naming the position', () => {
    expect(applyOperation('hello', { type: 'insert', position: 6, text: '!' })).toEqual({
      ok: false,
      problems: [
        { field: 'operation.position', message: "must be at most 5 (the content's length) for an insert" },
      ],
    })
    expect(problemsOf('', { type: 'insert', position: 1, text: 'x' })).toEqual([
      expect.objectContaining({ field: 'operation.position' }),
    ])
  })

  it('when the content would grow past the limit, then it is refused; up to the limit it applies', () => {
    expect(applyOperation('abc', { type: 'insert', position: 3, text: 'de' }, 5)).toEqual({
      ok: true,
      content: 'abcde',
    })
    expect(applyOperation('abc', { type: 'insert', position: 3, text: 'def' }, 5)).toEqual({
      ok: false,
      problems: [{ field: 'operation.text', message: 'would make the document longer than 5 characters' }],
    })
    // the default is the document limit, 1 000 000 characters
    expect(problemsOf('x'.repeat(999_999), { type: 'insert', position: 0, text: 'y' })).toEqual([])
    expect(problemsOf('x'.repeat(999_999), { type: 'insert', position: 0, text: 'yz' })).toEqual([
      expect.objectContaining({ field: 'operation.text' }),
    ])
  })

  it('when the text holds NUL or a lone surrogate, or the position splits a character, then it is refused', () => {
    expect(problemsOf('ab', { type: 'insert', position: 1, text: 'x\u0000y' })).toEqual([
      { field: 'operation.text', message: 'must not contain NUL (U+0000) characters' },
    ])
    expect(problemsOf('ab', { type: 'insert', position: 1, text: '\uD83D' })).toEqual([
      { field: 'operation.text', message: 'must be well-formed text (no lone surrogate)' },
    ])
    // '😀' is two UTF-16 code units: position 2 is between them
    expect(problemsOf('a😀b', { type: 'insert', position: 2, text: 'x' })).toEqual([
      { field: 'operation.position', message: 'must not split a character (a surrogate pair)' },
    ])
    expect(applyOperation('a😀b', { type: 'insert', position: 3, text: '😀' })).toEqual({
      ok: true,
      content: 'a😀😀b',
    })
  })
})

describe('delete', () => {
  it('when a range at the start, in the middle, at the end or the whole content is deleted, then it is gone', () => {
    expect(applyOperation('hello', { type: 'delete', position: 0, length: 1 })).toEqual({
      ok: true,
      content: 'ello',
    })
    expect(applyOperation('hello', { type: 'delete', position: 1, length: 3 })).toEqual({
      ok: true,
      content: 'ho',
    })
    expect(applyOperation('hello', { type: 'delete', position: 4, length: 1 })).toEqual({
      ok: true,
      content: 'hell',
    })
    expect(applyOperation('hello', { type: 'delete', position: 0, length: 5 })).toEqual({
      ok: true,
      content: '',
    })
  })

  it('when the range runs past the end, or starts at it, then it is refused naming the length', () => {
    const refusal = {
      ok: false,
      problems: [
        {
          field: 'operation.length',
          message: "position + length must be at most 5 (the content's length) for a delete",
        },
      ],
    }
    expect(applyOperation('hello', { type: 'delete', position: 3, length: 3 })).toEqual(refusal)
    expect(applyOperation('hello', { type: 'delete', position: 5, length: 1 })).toEqual(refusal)
    expect(applyOperation('hello', { type: 'delete', position: 9, length: 1 })).toEqual(refusal)
    expect(problemsOf('', { type: 'delete', position: 0, length: 1 })).toEqual([
      expect.objectContaining({ field: 'operation.length' }),
    ])
  })

  it('when the range would split a character, then it is refused; a whole one is deleted', () => {
    expect(problemsOf('a😀b', { type: 'delete', position: 1, length: 1 })).toEqual([
      { field: 'operation.position', message: 'must not split a character (a surrogate pair)' },
    ])
    expect(problemsOf('a😀b', { type: 'delete', position: 2, length: 2 })).toEqual([
      expect.objectContaining({ field: 'operation.position' }),
    ])
    expect(applyOperation('a😀b', { type: 'delete', position: 1, length: 2 })).toEqual({
      ok: true,
      content: 'ab',
    })
  })
})
