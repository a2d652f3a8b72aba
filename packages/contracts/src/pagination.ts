// The pagination envelope of list responses and the query parameters every list endpoint shares.
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox'
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

/**
 * The highest page a list serves: past it the offset would outgrow what a query can skip (and `page=1e400` would
 * reach the database as Infinity). 10 000 000 pages of 100 is an offset of 10^9, inside PostgreSQL's int4.
 */
export const maximumPage = 10_000_000

/**
 * The object of a query string whose defaulted parameters the client may leave out: TypeBox lists every
 * non-optional property as required, but a parameter with a default is filled in by validation (useDefaults), so
 * the handler still sees it while the document (and the validator) ask nothing of the client.
 */
export function QueryObject<Properties extends TProperties>(
  properties: Properties,
  options: { additionalProperties?: boolean } = {},
): TObject<Properties> {
  const schema = Type.Object(properties, options)
  const defaulted = new Set(
    Object.entries(properties)
      .filter(([, property]) => (property as { default?: unknown }).default !== undefined)
      .map(([name]) => name),
  )
  // only the JSON changes: the static type keeps the defaulted properties, which are present once validated
  const json = schema as { required?: string[] }
  const required = (json.required ?? []).filter((name) => !defaulted.has(name))
  if (required.length > 0) json.required = required
  else delete json.required
  return schema
}

/** page and limit: the parameters every list accepts, both optional (1 and 20 when absent). */
export const pageParameters = {
  page: Type.Integer({ minimum: 1, maximum: maximumPage, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: pageSize.maximum, default: pageSize.default }),
}

/** `^(a|b)(,(a|b))*$`: a comma-separated list of the allowed names, nothing else. */
const listOf = (item: string) => `^${item}(,${item})*$`
const oneOf = (names: readonly string[]) => `(${names.join('|')})`

/**
 * The longest comma-separated list naming each of `items` once: the bound of such a list. A longer one names an item
 * again, which asks nothing more (a list's sort keys and fields count once, the first wins), so a client in good faith
 * never sends one; sizes first refuses it before its pattern is tried.
 */
const longestListOf = (items: readonly string[]) =>
  items.reduce((length, item) => length + item.length, 0) + Math.max(items.length - 1, 0)

/**
 * `sort`: `field:asc` or `field:desc` of the allowed fields, comma-separated, or (`single`) one of them only; bounded
 * by every field once, descending.
 */
export function sortParameter(
  fields: readonly string[],
  { description, single = false }: { description: string; single?: boolean },
) {
  const key = `${oneOf(fields)}:(asc|desc)`
  const longest = fields.map((field) => `${field}:desc`)
  return Type.Optional(
    Type.String({
      pattern: single ? `^${key}$` : listOf(key),
      maxLength: single ? Math.max(...longest.map((each) => each.length)) : longestListOf(longest),
      description,
    }),
  )
}

/**
 * page, limit, sort, fields and q: the list parameters every resource accepts (filters are added per resource).
 * `sort` and `fields` take only the resource's allow-lists, so the document names every key a client may send.
 */
export function listQueryParameters(allowed: { sortFields: readonly string[]; fields: readonly string[] }) {
  return {
    ...pageParameters,
    sort: sortParameter(allowed.sortFields, {
      description: `field:asc or field:desc, comma-separated, e.g. createdAt:desc; fields: ${allowed.sortFields.join(', ')}`,
    }),
    fields: Type.Optional(
      Type.String({
        pattern: listOf(oneOf(allowed.fields)),
        maxLength: longestListOf(allowed.fields),
        description: `sparse fieldset, comma-separated (id is always included): ${allowed.fields.join(', ')}`,
      }),
    ),
    q: Type.Optional(Text({ minLength: 1, maxLength: 200, description: 'full-text search' })),
  }
}

/** What every list query carries once validated (defaults applied). */
export interface ListQuery {
  page: number
  limit: number
  sort?: string
  fields?: string
  q?: string
}

export interface PageRequest {
  page: number
  limit: number
}

/** Every parameter of the query but page and limit, form-encoded with a trailing `&` (empty when there is none). */
function otherParameters(query: Record<string, string | number | undefined>): string {
  let params: URLSearchParams | undefined
  for (const key in query) {
    const value = query[key]
    if (value === undefined || key === 'page' || key === 'limit' || !Object.hasOwn(query, key)) continue
    params ??= new URLSearchParams()
    params.set(key, String(value))
  }
  return params === undefined ? '' : `${params.toString()}&`
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
  // the other parameters are the same in every link: encoded once (a page of a list has up to five links)
  const start = `${path}?${otherParameters(query)}page=`
  const end = `&limit=${limit}`
  return {
    meta: { page, limit, total, totalPages },
    links: {
      self: `${start}${page}${end}`,
      first: `${start}1${end}`,
      prev: page > 1 ? `${start}${Math.min(page - 1, lastPage)}${end}` : null,
      next: page < totalPages ? `${start}${page + 1}${end}` : null,
      last: `${start}${lastPage}${end}`,
    },
  }
}
