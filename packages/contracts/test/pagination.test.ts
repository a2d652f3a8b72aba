import { describe, expect, it } from 'vitest'
import { paginate } from '../src/pagination.ts'

describe('paginate', () => {
  const query = { sort: 'createdAt:desc', status: 'active', q: undefined }

  it('when the first of three pages is asked for, then prev is null and next, last point onwards, keeping the query', () => {
    const { meta, links } = paginate(
      '/api/v1/users',
      { ...query, page: 1, limit: 20 },
      { page: 1, limit: 20 },
      45,
    )
    expect(meta).toEqual({ page: 1, limit: 20, total: 45, totalPages: 3 })
    expect(links).toEqual({
      self: '/api/v1/users?sort=createdAt%3Adesc&status=active&page=1&limit=20',
      first: '/api/v1/users?sort=createdAt%3Adesc&status=active&page=1&limit=20',
      prev: null,
      next: '/api/v1/users?sort=createdAt%3Adesc&status=active&page=2&limit=20',
      last: '/api/v1/users?sort=createdAt%3Adesc&status=active&page=3&limit=20',
    })
  })

  it('when a middle page is asked for, then prev and next are its neighbours', () => {
    const { links } = paginate('/u', {}, { page: 2, limit: 20 }, 45)
    expect(links.prev).toBe('/u?page=1&limit=20')
    expect(links.next).toBe('/u?page=3&limit=20')
  })

  it('when the last page is asked for, then next is null', () => {
    const { links, meta } = paginate('/u', {}, { page: 3, limit: 20 }, 45)
    expect(meta.totalPages).toBe(3)
    expect(links.next).toBeNull()
    expect(links.last).toBe('/u?page=3&limit=20')
  })

  it('when there are no items, then there are zero pages and first and last both name page 1', () => {
    const { links, meta } = paginate('/u', {}, { page: 1, limit: 20 }, 0)
    expect(meta).toEqual({ page: 1, limit: 20, total: 0, totalPages: 0 })
    expect(links).toMatchObject({
      prev: null,
      next: null,
      first: '/u?page=1&limit=20',
      last: '/u?page=1&limit=20',
    })
  })

  it('when a page past the end is asked for, then prev points at the real last page', () => {
    const { links } = paginate('/u', {}, { page: 9, limit: 20 }, 45)
    expect(links.prev).toBe('/u?page=3&limit=20')
    expect(links.next).toBeNull()
  })
})
