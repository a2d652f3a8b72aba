// List queries as documented: page and limit optional (their defaults are applied), sort and fields only from the
// resource's allow-lists, no page past the bound; names that trim to nothing are refused by their pattern.
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { maximumPage, pageParameters, QueryObject, sortParameter } from '../src/pagination.ts'
import { VisibleText } from '../src/schema-kinds.ts'
import { UserListQuery, userFields, userSortFields } from '../src/users.ts'

/** A string schema's maxLength (TypeBox's types keep the keyword out of Optional's). */
const maxLengthOf = (schema: object) => (schema as { maxLength?: number }).maxLength

describe('list queries', () => {
  it('when a query has parameters with defaults, then they are not required of the client (the others still are)', () => {
    const schema = QueryObject({ ...pageParameters, userId: Type.String() })
    expect(schema.required).toEqual(['userId'])
    expect(UserListQuery.required).toBeUndefined()
    expect(Value.Check(UserListQuery, {})).toBe(true)
  })

  it('when sort names an allow-listed field with a direction, then it is valid, and any other field is not', () => {
    for (const field of userSortFields)
      expect(Value.Check(UserListQuery, { sort: `${field}:desc` })).toBe(true)
    expect(Value.Check(UserListQuery, { sort: 'name:asc,createdAt:desc' })).toBe(true)
    for (const sort of [
      'password:asc',
      'name',
      'name:up',
      'name:asc,',
      'password_hash:desc',
      'name:asc;drop',
    ])
      expect(Value.Check(UserListQuery, { sort })).toBe(false)
  })

  it('when fields lists allow-listed names, then it is valid, and any other name is not', () => {
    expect(Value.Check(UserListQuery, { fields: userFields.join(',') })).toBe(true)
    for (const fields of ['passwordHash', 'id,', 'id,,name', 'name,version']) {
      expect(Value.Check(UserListQuery, { fields })).toBe(false)
    }
  })

  it('when sort and fields name every allowed field once, then they are within their bounds; one name more is past them', () => {
    const sort = userSortFields.map((field) => `${field}:desc`).join(',')
    expect(Value.Check(UserListQuery, { sort, fields: userFields.join(',') })).toBe(true)
    // a name again asks nothing more (the first wins): only a longer text, which the bound refuses before the pattern
    expect(Value.Check(UserListQuery, { sort: `${sort},name:asc` })).toBe(false)
    expect(Value.Check(UserListQuery, { fields: `${userFields.join(',')},id` })).toBe(false)
    expect(maxLengthOf(UserListQuery.properties.sort)).toBe(sort.length)
    expect(maxLengthOf(UserListQuery.properties.fields)).toBe(userFields.join(',').length)
  })

  it('when a single sort key is allowed, then its bound is the longest key', () => {
    const Query = Type.Object({ sort: sortParameter(['createdAt', 'id'], { single: true, description: '' }) })
    expect(maxLengthOf(Query.properties.sort)).toBe('createdAt:desc'.length)
    expect(Value.Check(Query, { sort: 'createdAt:desc' })).toBe(true)
    expect(Value.Check(Query, { sort: 'createdAt:desc,id:asc' })).toBe(false)
  })

  it('when page is past the last page a list can serve, then it is invalid', () => {
    expect(Value.Check(UserListQuery, { page: maximumPage })).toBe(true)
    expect(Value.Check(UserListQuery, { page: maximumPage + 1 })).toBe(false)
  })
})

describe('visible text', () => {
  const Name = VisibleText({ minLength: 1, maxLength: 200 })

  it('when a text has a character that trimming keeps, then it is valid, wherever the white space is', () => {
    for (const text of ['Ada', ' Ada ', '\tA\n', '\u0085']) expect(Value.Check(Name, text)).toBe(true)
  })

  it('when a text is only white space (as String.prototype.trim sees it) or holds a NUL, then it is invalid', () => {
    for (const text of ['\r', ' ', '\u00a0\u2003', '\ufeff', '\u2028', 'Ada\u0000']) {
      expect({ text, valid: Value.Check(Name, text) }).toEqual({ text, valid: false })
      if (!text.includes('\u0000')) expect(text.trim()).toBe('')
    }
  })
})
