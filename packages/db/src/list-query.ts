// List queries over one table: page and limit, allow-listed sort and sparse fields, equality filters and an
// optional full-text `q`, answered with the pagination envelope of @meridian/contracts.
//
// A list is defined once per resource, in its service's data layer:
//
//   export const orderList = defineList({
//     table: 'orders',
//     columns: { id: 'id', status: 'status', customerId: 'customer_id', totalCents: 'total_cents', createdAt: 'created_at' },
//     selectable: ['id', 'status', 'customerId', 'totalCents', 'createdAt'],
//     sortable: ['totalCents', 'createdAt'],
//     filterable: ['status', 'customerId'],
//     search: { vector: 'search' },            // or { fields: [...] } (to_tsvector on the fly) or { substring: [...] } (ILIKE)
//     defaultSort: 'createdAt:desc',
//     alwaysSelected: ['id'],
//   })
//
// and used per request (the route's querystring being listQueryParameters() of contracts plus the filters):
//
//   const request = orderList.parse(query)                       // 422 for anything outside the allow-lists
//   const { rows, total } = await orderList.run<OrderRecord>(sql, request)
//   return listEnvelope(path, query, request, rows.map(present), total)   // { data, meta, links }
//
// SQL is built from the definition alone: column names come from `columns` (checked to be plain lower-case names
// and quoted), never from the request; every value (filters, q, limit, offset) is a parameter. Rows are keyed by
// API field: `run` expects a client of createDatabase (result columns camelCased), and a column whose camelCased
// name is not its field is selected `as "field"`.
import {
  AppError,
  type ErrorDetail,
  maximumPage,
  type PageRequest,
  type PaginationLinks,
  type PaginationMeta,
  pageSize,
  paginate,
} from '@meridian/contracts'
import postgres from 'postgres'
import type { Queryable } from './database.ts'

/** What an equality filter compares a column with. */
export type FilterValue = string | number | boolean

export type SortDirection = 'asc' | 'desc'
/** `field:asc` or `field:desc` */
export type SortSpec<Sortable extends string> = `${Sortable}:${SortDirection}`

/** Names of the query parameters every list takes; a filter may not use them. */
const reservedParameters = new Set(['page', 'limit', 'sort', 'fields', 'q'])

/**
 * Full-text `q`. `vector`: a stored tsvector column (`"<vector>" @@ websearch_to_tsquery('<config>', q)`), the one
 * to use for big tables (GIN index). `fields`: the same over `to_tsvector` of the fields' text columns, computed per
 * row. `substring`: any of the fields' text columns contains q, case-insensitively (ILIKE, wildcards escaped).
 * `config` is the text search configuration ('simple' by default), `syntax` the tsquery parser ('websearch').
 */
export type ListSearch<Field extends string> =
  | { vector: string; config?: string; syntax?: TsQuerySyntax }
  | { fields: readonly Field[]; config?: string; syntax?: TsQuerySyntax }
  | { substring: readonly Field[] }

export type TsQuerySyntax = 'websearch' | 'plain' | 'phrase'

export interface ListSpec<
  Field extends string,
  Selectable extends Field,
  Sortable extends Field,
  Filterable extends Field,
  Always extends Selectable,
> {
  /** the table (or `schema.table`), a plain lower-case name */
  table: string
  /** API field -> column: the only names that ever reach SQL */
  columns: Readonly<Record<Field, string>>
  /** fields `fields=` may name, in the order a list without `fields` selects them */
  selectable: readonly Selectable[]
  /** fields `sort=` may name */
  sortable: readonly Sortable[]
  /** fields with an equality filter, a query parameter of the same name (compared in this order) */
  filterable?: readonly Filterable[]
  /** what `q` searches; a list without it refuses `q` */
  search?: ListSearch<NoInfer<Field>>
  /** the order when the request names none, e.g. 'createdAt:desc' */
  defaultSort: NoInfer<SortSpec<Sortable>> | readonly NoInfer<SortSpec<Sortable>>[]
  /** selected whatever `fields` says, first, so items stay addressable (e.g. ['id']) */
  alwaysSelected: readonly Always[]
  /** a unique field, ordered ascending after the requested sort so pages never overlap; default 'id' */
  tieBreaker?: NoInfer<Field>
  /** statement texts kept, one pair per request shape; default 256 */
  cacheSize?: number
}

export interface SortKey<Sortable extends string> {
  field: Sortable
  descending: boolean
}

/** A list request once parsed: every name allow-listed, page and limit in range. */
export interface ListRequest<Selectable extends string, Sortable extends string, Filterable extends string>
  extends PageRequest {
  /** the fields to select, the always-selected ones first */
  fields: readonly Selectable[]
  /** the requested order (the tie-breaker follows it in SQL) */
  sort: readonly SortKey<Sortable>[]
  /** the equality filters set */
  filters: Readonly<Partial<Record<Filterable, FilterValue>>>
  /** the full-text search, when set */
  q: string | undefined
  /** (page - 1) * limit */
  offset: number
}

/** What `parse` reads: a validated list query (contracts' ListQuery, defaults optional) and its filters. */
export type ListInput<Filterable extends string> = {
  readonly page?: number
  readonly limit?: number
  readonly sort?: string
  readonly fields?: string
  readonly q?: string
} & { readonly [Name in Filterable]?: FilterValue | undefined }

/** A row of a sparse list: the always-selected fields, and whichever others were asked for. */
export type ListRow<Row, Always extends string> = Pick<Row, Always & keyof Row> & Partial<Row>

export interface ListResult<Item> {
  rows: Item[]
  /** the rows matching the filters and q, over all pages */
  total: number
}

/** The two statements of a request shape; parameters: the filters set (in `filterable` order), q, limit, offset. */
export interface ListStatements {
  page: string
  count: string
}

export interface ListDefinition<
  Selectable extends string,
  Sortable extends string,
  Filterable extends string,
  Always extends Selectable,
> {
  /** Checks the names and ranges of a query (422 naming anything outside the allow-lists) into a request. */
  parse(query: ListInput<Filterable>): ListRequest<Selectable, Sortable, Filterable>
  /** One page of rows and the total, counted in parallel, each as a prepared statement. */
  run<Row extends Partial<Record<Selectable, unknown>> = Record<Selectable, unknown>>(
    sql: Queryable,
    request: ListRequest<Selectable, Sortable, Filterable>,
  ): Promise<ListResult<ListRow<Row, Always>>>
  /** The statement texts `run` sends for the request (from the cache). */
  statements(request: ListRequest<Selectable, Sortable, Filterable>): ListStatements
  /** The parameters `run` sends with them. */
  parameters(request: ListRequest<Selectable, Sortable, Filterable>): {
    page: FilterValue[]
    count: FilterValue[]
  }
  /** How many request shapes have their statements cached (at most `cacheSize`). */
  readonly cachedShapes: number
}

/** The type of the requests of a list definition. */
export type ListRequestOf<Definition extends { parse(query: never): unknown }> = ReturnType<
  Definition['parse']
>

/** The pagination envelope: a page of items, its meta and its links. */
export interface ListEnvelope<Item> {
  data: Item[]
  meta: PaginationMeta
  links: PaginationLinks
}

/** A query as the links keep it: every parameter but page and limit, which each link sets. */
export type ListLinkQuery = { readonly [name: string]: FilterValue | undefined }

/**
 * `{ data, meta, links }` for a page: contracts' paginate(), the links keeping the path the client used and every
 * other parameter of its query (filters, sort, fields, q).
 */
export function listEnvelope<Item>(
  path: string,
  query: ListLinkQuery,
  page: PageRequest,
  data: Item[],
  total: number,
): ListEnvelope<Item> {
  // paginate writes each value with String(), so a boolean filter reads as 'true' or 'false' like any other
  return { data, ...paginate(path, query as Record<string, string | number | undefined>, page, total) }
}

const plainName = /^[a-z_][a-z0-9_]*$/
// a field is also a result key: camelCase without '_', so the client's camelCase transform leaves it as it is
const fieldName = /^[A-Za-z][A-Za-z0-9]*$/

/** A column (or table) name as SQL: only definition-time, plain lower-case names get here. */
function identifier(name: string): string {
  if (!plainName.test(name)) throw new Error(`not a plain SQL name: ${name}`)
  return `"${name}"`
}

function tableName(table: string): string {
  return table.split('.').map(identifier).join('.')
}

const tsQueryFunction: Record<TsQuerySyntax, string> = {
  websearch: 'websearch_to_tsquery',
  plain: 'plainto_tsquery',
  phrase: 'phraseto_tsquery',
}

const isSet = (value: unknown): boolean => value !== undefined && value !== null && value !== ''

// prepared once per connection; `simple: false` too, or a statement without parameters (the count of an
// unfiltered list) would go as a simple query, parsed and planned by PostgreSQL every time
const prepared = { prepare: true, simple: false } as const

/**
 * A list over `spec.table`. The definition is checked at once (an unknown field or a name that is not plain SQL
 * throws), so a mistake fails at startup rather than on a request.
 */
export function defineList<
  const Field extends string,
  const Selectable extends Field,
  const Sortable extends Field,
  const Always extends Selectable,
  const Filterable extends Field = never,
>(
  spec: ListSpec<Field, Selectable, Sortable, Filterable, Always>,
): ListDefinition<Selectable, Sortable, Filterable, Always> {
  type Request = ListRequest<Selectable, Sortable, Filterable>
  const list = checkedList(spec)
  const cache = new StatementCache(list)

  return {
    parse: (query) => parseListQuery(list, query),

    async run<Row>(sql: Queryable, request: Request) {
      const { page, count } = cache.statements(request)
      const values = conditionValues(list, request)
      const [rows, [counted]] = await Promise.all([
        sql.unsafe<ListRow<Row, Always>[]>(page, [...values, request.limit, request.offset], prepared),
        sql.unsafe<{ total: number }[]>(count, values, prepared),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    statements: (request) => cache.statements(request),

    parameters(request) {
      const values = conditionValues(list, request)
      return { page: [...values, request.limit, request.offset], count: values }
    },

    get cachedShapes() {
      return cache.size
    },
  }
}

/** A definition once checked: SQL names quoted, allow-lists as sets, defaults parsed. */
interface CheckedList<Selectable extends string, Sortable extends string, Filterable extends string> {
  table: string
  /** the quoted column of a field; throws for a field outside `columns` */
  columnOf(field: string): string
  /** the quoted table */
  from: string
  filterable: readonly Filterable[]
  sortable: ReadonlySet<string>
  selectable: ReadonlySet<string>
  /** the allow-lists as error messages name them */
  sortList: string
  fieldList: string
  /** field -> its select-list entry */
  selected: ReadonlyMap<string, string>
  /** the quoted tie-breaker column */
  tieBreaker: string
  /** the `q` condition with its parameter at `$at`, when the list has a search */
  searchCondition: ((at: number) => string) | undefined
  likeSearch: boolean
  always: readonly Selectable[]
  defaultFields: readonly Selectable[]
  defaultSort: readonly SortKey<Sortable>[]
  cacheSize: number
}

/** Checks every name of the definition (throwing at the first mistake) and prepares what requests use. */
function checkedList<
  Field extends string,
  Selectable extends Field,
  Sortable extends Field,
  Filterable extends Field,
  Always extends Selectable,
>(
  spec: ListSpec<Field, Selectable, Sortable, Filterable, Always>,
): CheckedList<Selectable, Sortable, Filterable> {
  const columns = spec.columns as Readonly<Record<string, string>>
  const columnOf = (field: string): string => {
    const column = Object.hasOwn(columns, field) ? columns[field] : undefined
    if (column === undefined) throw new Error(`list of ${spec.table}: '${field}' is not in columns`)
    return column
  }
  for (const [field, column] of Object.entries(columns)) {
    if (!fieldName.test(field)) throw new Error(`list of ${spec.table}: field '${field}' is not camelCase`)
    identifier(column)
  }
  const from = tableName(spec.table)
  const filterable: readonly Filterable[] = spec.filterable ?? []
  for (const field of [...spec.selectable, ...spec.sortable, ...filterable, ...spec.alwaysSelected]) {
    columnOf(field)
  }
  for (const field of filterable) {
    if (reservedParameters.has(field)) throw new Error(`list of ${spec.table}: '${field}' cannot be a filter`)
  }
  for (const field of spec.alwaysSelected) {
    if (!spec.selectable.includes(field))
      throw new Error(`list of ${spec.table}: '${field}' is not selectable`)
  }
  const tieBreaker = identifier(columnOf(spec.tieBreaker ?? 'id'))
  const cacheSize = spec.cacheSize ?? 256
  if (!(Number.isInteger(cacheSize) && cacheSize > 0)) throw new Error(`list of ${spec.table}: bad cacheSize`)

  /** `"column"`, or `"column" as "field"` where the camelCased column is not the field's name */
  const selected = new Map<string, string>(
    spec.selectable.map((field) => {
      const column = columnOf(field)
      const sql =
        postgres.toCamel(column) === field ? identifier(column) : `${identifier(column)} as "${field}"`
      return [field, sql]
    }),
  )
  const always: readonly Selectable[] = [...spec.alwaysSelected]
  const list: CheckedList<Selectable, Sortable, Filterable> = {
    table: spec.table,
    columnOf: (field) => identifier(columnOf(field)),
    from,
    filterable,
    sortable: new Set<string>(spec.sortable),
    selectable: new Set<string>(spec.selectable),
    sortList: spec.sortable.join(', '),
    fieldList: spec.selectable.join(', '),
    selected,
    tieBreaker,
    searchCondition: spec.search ? searchSql(spec.table, spec.search, columnOf) : undefined,
    likeSearch: spec.search !== undefined && 'substring' in spec.search,
    always,
    defaultFields: [...new Set<Selectable>([...always, ...spec.selectable])],
    defaultSort: [],
    cacheSize,
  }
  const definitionProblems: ErrorDetail[] = []
  list.defaultSort = parseSort(
    list,
    typeof spec.defaultSort === 'string' ? spec.defaultSort : spec.defaultSort.join(','),
    definitionProblems,
  )
  if (definitionProblems.length > 0 || list.defaultSort.length === 0) {
    throw new Error(`list of ${spec.table}: bad defaultSort ${String(spec.defaultSort)}`)
  }
  return list
}

/** The condition `q` adds, with its parameter at `$at`: a tsquery over a vector or fields, or ILIKE over fields. */
function searchSql(
  table: string,
  search: ListSearch<string>,
  columnOf: (field: string) => string,
): (at: number) => string {
  if ('substring' in search) {
    if (search.substring.length === 0) throw new Error(`list of ${table}: substring search of no field`)
    const searched = search.substring.map((field) => identifier(columnOf(field)))
    return (at) => `(${searched.map((column) => `${column} ilike $${at}`).join(' or ')})`
  }
  const config = search.config ?? 'simple'
  if (!plainName.test(config)) throw new Error(`list of ${table}: bad text search config ${config}`)
  const query = tsQueryFunction[search.syntax ?? 'websearch']
  let vector: string
  if ('vector' in search) vector = identifier(search.vector)
  else {
    if (search.fields.length === 0) throw new Error(`list of ${table}: full-text search of no field`)
    const text = search.fields
      .map((field) => `coalesce(${identifier(columnOf(field))}, '')`)
      .join(` || ' ' || `)
    vector = `to_tsvector('${config}', ${text})`
  }
  return (at) => `${vector} @@ ${query}('${config}', $${at})`
}

/** Checks a query's names and ranges into a request; every problem is reported at once, in one 422. */
function parseListQuery<Selectable extends string, Sortable extends string, Filterable extends string>(
  list: CheckedList<Selectable, Sortable, Filterable>,
  query: ListInput<Filterable>,
): ListRequest<Selectable, Sortable, Filterable> {
  const problems: ErrorDetail[] = []
  const page = positiveInteger(query.page, 'page', 1, maximumPage, problems)
  const limit = positiveInteger(query.limit, 'limit', pageSize.default, pageSize.maximum, problems)
  const sort = query.sort ? parseSort(list, query.sort, problems) : list.defaultSort
  const fields = query.fields ? parseFields(list, query.fields, problems) : list.defaultFields
  const filters = parseFilters(list, query, problems)

  let q: string | undefined
  if (query.q !== undefined && query.q !== '') {
    if (typeof query.q !== 'string') problems.push({ field: 'q', message: 'q must be text' })
    else if (!list.searchCondition) problems.push({ field: 'q', message: 'this list has no search' })
    else q = query.q
  }

  if (problems.length > 0) throw AppError.validation(problems)
  return { fields, sort, filters, q, page, limit, offset: (page - 1) * limit }
}

/** `a:asc,b:desc` -> sort keys, each field once (the first wins); problems go to `problems`. */
function parseSort<Sortable extends string>(
  list: CheckedList<string, Sortable, string>,
  sort: string,
  problems: ErrorDetail[],
): SortKey<Sortable>[] {
  const keys: SortKey<Sortable>[] = []
  const seen = new Set<string>()
  for (const part of sort.split(',')) {
    const colon = part.indexOf(':')
    const field = colon < 0 ? part : part.slice(0, colon)
    const direction = colon < 0 ? '' : part.slice(colon + 1)
    if (!list.sortable.has(field)) {
      problems.push({
        field: 'sort',
        message: `cannot sort by '${field}'; allowed: ${list.sortList}`,
        received: part,
      })
    } else if (direction !== 'asc' && direction !== 'desc') {
      problems.push({ field: 'sort', message: `sort by ${field}:asc or ${field}:desc`, received: part })
    } else if (!seen.has(field)) {
      seen.add(field)
      keys.push({ field: field as Sortable, descending: direction === 'desc' })
    }
  }
  return keys
}

/** `fields=a,b` -> the always-selected fields, then those asked for, each once; unknown ones go to `problems`. */
function parseFields<Selectable extends string>(
  list: CheckedList<Selectable, string, string>,
  fields: string,
  problems: ErrorDetail[],
): readonly Selectable[] {
  const requested = fields.split(',')
  for (const field of requested) {
    if (!list.selectable.has(field)) {
      problems.push({
        field: 'fields',
        message: `unknown field '${field}'; allowed: ${list.fieldList}`,
        received: field,
      })
    }
  }
  return [...new Set<Selectable>([...list.always, ...(requested as Selectable[])])]
}

/** The equality filters set in the query, each a single value. */
function parseFilters<Filterable extends string>(
  list: CheckedList<string, string, Filterable>,
  query: ListInput<Filterable>,
  problems: ErrorDetail[],
): Partial<Record<Filterable, FilterValue>> {
  const filters: Partial<Record<Filterable, FilterValue>> = {}
  for (const field of list.filterable) {
    const value: unknown = query[field]
    if (!isSet(value)) continue
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      filters[field] = value
    } else {
      problems.push({ field, message: `${field} takes a single value` })
    }
  }
  return filters
}

function positiveInteger(
  value: unknown,
  name: 'page' | 'limit',
  fallback: number,
  maximum: number,
  problems: ErrorDetail[],
): number {
  if (value === undefined) return fallback
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= maximum) return value
  problems.push({
    field: name,
    message: `${name} must be an integer from 1 to ${maximum}`,
    received: String(value),
  })
  return fallback
}

const sortShape = (sort: readonly SortKey<string>[]) =>
  sort.map(({ field, descending }) => (descending ? `-${field}` : field)).join(',')

/**
 * The statements by request shape (fields, sort, which filters are set, q set). Their text is built from the
 * definition only, so a few shapes serve every request, each prepared once per connection; built per request
 * with postgres.js fragments, the same text cost a dozen nested query objects, a fifth of a list's CPU in the
 * database client. Bounded: past `cacheSize` shapes the oldest is dropped.
 */
class StatementCache<Selectable extends string, Sortable extends string, Filterable extends string> {
  readonly #cache = new Map<string, ListStatements>()
  readonly #defaultFieldsShape: string
  readonly #defaultSortShape: string
  /** the statements of the default fields and order without filters or q, once built */
  #plain: ListStatements | undefined

  constructor(private readonly list: CheckedList<Selectable, Sortable, Filterable>) {
    this.#defaultFieldsShape = list.defaultFields.join(',')
    this.#defaultSortShape = sortShape(list.defaultSort)
  }

  #anyFilter(request: ListRequest<Selectable, Sortable, Filterable>): boolean {
    for (const field of this.list.filterable) if (isSet(request.filters[field])) return true
    return false
  }

  /** how many request shapes have their statements cached */
  get size(): number {
    return this.#cache.size
  }

  statements(request: ListRequest<Selectable, Sortable, Filterable>): ListStatements {
    const { list } = this
    // the commonest shape (default fields and order, no filter, no q) without building its key
    const plain =
      request.fields === list.defaultFields && request.sort === list.defaultSort && !isSet(request.q)
    if (plain && this.#plain !== undefined && !this.#anyFilter(request)) return this.#plain
    let shape = request.fields === list.defaultFields ? this.#defaultFieldsShape : request.fields.join(',')
    shape += '|'
    shape += request.sort === list.defaultSort ? this.#defaultSortShape : sortShape(request.sort)
    shape += '|'
    for (const field of list.filterable) shape += isSet(request.filters[field]) ? '1' : '0'
    shape += isSet(request.q) ? 'q' : ''
    const cached = this.#cache.get(shape)
    if (cached) return cached

    const built = buildStatements(list, request)
    if (plain && !this.#anyFilter(request)) this.#plain = built
    if (this.#cache.size >= list.cacheSize) {
      const oldest = this.#cache.keys().next().value
      if (oldest !== undefined) this.#cache.delete(oldest)
    }
    this.#cache.set(shape, built)
    return built
  }
}

/** The page and count statements of a request's shape; values are parameters, names come from the definition. */
function buildStatements<Selectable extends string, Sortable extends string, Filterable extends string>(
  list: CheckedList<Selectable, Sortable, Filterable>,
  request: ListRequest<Selectable, Sortable, Filterable>,
): ListStatements {
  const conditions: string[] = []
  for (const field of list.filterable) {
    if (isSet(request.filters[field])) {
      conditions.push(`${list.columnOf(field)} = $${conditions.length + 1}`)
    }
  }
  if (isSet(request.q)) {
    if (!list.searchCondition) throw new Error(`list of ${list.table}: no search for q`)
    conditions.push(list.searchCondition(conditions.length + 1))
  }
  const where = conditions.length > 0 ? ` where ${conditions.join(' and ')}` : ''
  const select = request.fields
    .map((field) => {
      const sql = list.selected.get(field)
      if (sql === undefined) throw new Error(`list of ${list.table}: '${field}' is not selectable`)
      return sql
    })
    .join(', ')
  // the tie-breaker last, so pages never overlap or skip rows that share a sort value
  const orderBy = [
    ...request.sort.map(({ field, descending }) => {
      if (!list.sortable.has(field)) throw new Error(`list of ${list.table}: cannot sort by '${field}'`)
      return `${list.columnOf(field)} ${descending ? 'desc' : 'asc'}`
    }),
    `${list.tieBreaker} asc`,
  ].join(', ')
  const limitAt = conditions.length + 1
  return {
    page: `select ${select} from ${list.from}${where} order by ${orderBy} limit $${limitAt} offset $${limitAt + 1}`,
    count: `select count(*)::int as total from ${list.from}${where}`,
  }
}

/** In the statements' order: the filters set, then q. */
function conditionValues<Filterable extends string>(
  list: CheckedList<string, string, Filterable>,
  request: ListRequest<string, string, Filterable>,
): FilterValue[] {
  const values: FilterValue[] = []
  for (const field of list.filterable) {
    const value = request.filters[field]
    if (value !== undefined && isSet(value)) values.push(value)
  }
  if (request.q !== undefined && isSet(request.q)) {
    values.push(list.likeSearch ? `%${request.q.replace(/[\\%_]/g, '\\$&')}%` : request.q)
  }
  return values
}
