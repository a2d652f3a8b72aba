// The pagination envelope of list responses and the query parameters every list endpoint shares.
import { type Static, type TSchema, Type } from 'typebox'
import { Nullable, Text } from './schema-kinds.ts'

export const PaginationMeta = Type.Object(
  {
    page: Type.Integer({ minimum: 1 }),
    limit: Type.Integer({ minimum: 1 }),
    total: Type.Integer({ minimum: 0 }),
    totalPages: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
)
export type PaginationMeta = Static<typeof PaginationMeta>

const Link = Type.String({ description: 'relative URL carrying page and limit' })
export const PaginationLinks = Type.Object(
  {
    self: Link,
    first: Link,
    prev: Nullable(Link),
    next: Nullable(Link),
    last: Link,
  },
  { additionalProperties: false },
)
export type PaginationLinks = Static<typeof PaginationLinks>

/** `{ data, meta, links }` around a page of items. */
export const Paginated = <Item extends TSchema>(item: Item) =>
  Type.Object(
    { data: Type.Array(item), meta: PaginationMeta, links: PaginationLinks },
    { additionalProperties: false },
  )

export const pageSize = { default: 20, maximum: 100 } as const

/** page, limit, sort, fields and q: the list parameters every resource accepts (filters are added per resource). */
export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: pageSize.maximum, default: pageSize.default }),
  sort: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9_]*:(asc|desc)(,[A-Za-z][A-Za-z0-9_]*:(asc|desc))*$',
      description: 'field:asc or field:desc, comma-separated, e.g. createdAt:desc',
    }),
  ),
  fields: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9_]*(,[A-Za-z][A-Za-z0-9_]*)*$',
      description: 'sparse fieldset',
    }),
  ),
  q: Type.Optional(Text({ minLength: 1, maxLength: 200, description: 'full-text search' })),
})
export type ListQuery = Static<typeof ListQuery>

export interface PageRequest {
  page: number
  limit: number
}

/** The pagination envelope's meta and links for a page; links keep every other query parameter. */
export function paginate(
  path: string,
  query: Record<string, string | number | undefined>,
  { page, limit }: PageRequest,
  total: number,
): { meta: PaginationMeta; links: PaginationLinks } {
  const totalPages = Math.ceil(total / limit)
  const lastPage = Math.max(totalPages, 1)
  const link = (target: number) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && key !== 'page' && key !== 'limit') params.set(key, String(value))
    }
    params.set('page', String(target))
    params.set('limit', String(limit))
    return `${path}?${params.toString()}`
  }
  return {
    meta: { page, limit, total, totalPages },
    links: {
      self: link(page),
      first: link(1),
      prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
      next: page < totalPages ? link(page + 1) : null,
      last: link(lastPage),
    },
  }
}
