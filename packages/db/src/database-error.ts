// The one place where database errors become AppErrors (spec, Errors, rule 4); the offending value never leaks.
import { AppError, ErrorCode, type ErrorDetail } from '@meridian/contracts'
import postgres from 'postgres'

/** The fields of a PostgreSQL error report that the mapping reads (postgres.js names them so). */
interface ServerError {
  code: string | number
  message?: string
  detail?: string
  column_name?: string
  constraint_name?: string
  table_name?: string
  /** MongoDB-style duplicate-key errors name their key here */
  keyPattern?: Record<string, unknown>
  keyValue?: Record<string, unknown>
}

const uniqueViolation = '23505'
const duplicateKey = '11000'
const foreignKeyViolation = '23503'
const notNullViolation = '23502'

/** SQLSTATEs of a value the column cannot take, with what the client is told about its field. */
const invalidValueMessages: Record<string, string> = {
  '22P02': 'has an invalid format',
  '22007': 'is not a valid date or time',
  '22008': 'is an out-of-range date or time',
  '22003': 'is out of range',
  '22001': 'is too long',
  // invalid byte sequence (a NUL in text, or bytes that are not UTF-8) and untranslatable characters
  '22021': 'contains characters that cannot be stored',
  '22P05': 'contains characters that cannot be stored',
  '23514': 'is not an allowed value',
}

/**
 * True for an error the database server reported (a postgres.js `PostgresError`, or any error carrying a SQLSTATE
 * and a severity) and for a duplicate-key error with code 11000. Client-side failures such as a refused or closed
 * connection are not included; mapDatabaseError still turns them into DB_ERROR.
 */
export function isDatabaseError(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) return true
  if (typeof error !== 'object' || error === null || !('code' in error)) return false
  const { code } = error as { code: unknown }
  if (String(code) === duplicateKey) return true
  return (
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    ((error as { name?: unknown }).name === 'PostgresError' || 'severity' in error)
  )
}

/**
 * True when a statement broke the unique constraint (or unique index) named `constraint`: a write that lost a race
 * the index decides, which the caller answers itself rather than as mapDatabaseError's 409.
 */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (!isDatabaseError(error)) return false
  const report = error as ServerError
  return String(report.code) === uniqueViolation && report.constraint_name === constraint
}

/** postgres.js / socket failures that mean the database cannot be reached right now. */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
])

/**
 * True when the database is down or refusing work rather than rejecting a statement: the connection failed, or the
 * server is shutting down, starting, or out of connections (SQLSTATE class 08, 57P01-57P03, 53300).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false
  const code = String((error as { code: unknown }).code)
  return (
    unreachableCodes.has(code) || /^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '53300'
  )
}

/**
 * The AppError a client may see for `error`: 503 SERVICE_UNAVAILABLE while the database cannot be reached, 409 CONFLICT for a duplicate, 422 VALIDATION_ERROR for a missing,
 * dangling or ill-formed value (with the field, camelCased like result columns), and 500 DB_ERROR with a generic
 * message for anything else, the original error kept as `cause` for the log. An AppError is returned unchanged.
 */
export function mapDatabaseError(error: unknown): AppError {
  if (error instanceof AppError) return error
  if (isDatabaseUnavailable(error)) {
    return new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, { retryAfter: 5, cause: error })
  }
  if (!isDatabaseError(error)) return unrecognised(error)

  const report = error as ServerError
  const code = String(report.code)
  if (code === uniqueViolation) {
    return AppError.conflict(undefined, fieldsOf(report, '_key').map(already))
  }
  if (code === duplicateKey) {
    return AppError.conflict(undefined, duplicateKeyFields(report).map(already))
  }
  if (code === foreignKeyViolation) {
    // The same code reports a write that points nowhere and a delete of a row others still point to.
    const message = /is still referenced from/.test(report.detail ?? '')
      ? 'is still referenced by other records'
      : 'refers to a record that does not exist'
    return AppError.validation(fieldsOf(report, '_fkey').map((field) => ({ field, message })))
  }
  if (code === notNullViolation) {
    return AppError.validation([{ field: singleField(report, '_not_null'), message: 'is required' }])
  }
  // class 22 is "data exception": whatever else of it a statement meets, the value was at fault, not the server
  const invalidValue =
    invalidValueMessages[code] ?? (code.startsWith('22') ? 'has an invalid value' : undefined)
  if (invalidValue) {
    return AppError.validation([{ field: singleField(report, '_check'), message: invalidValue }])
  }
  return unrecognised(error)
}

function unrecognised(error: unknown): AppError {
  return new AppError(500, ErrorCode.DB_ERROR, { cause: error })
}

function already(field: string): ErrorDetail {
  return { field, message: 'already exists' }
}

/** The key columns named by `detail` ("Key (a, b)=(…) …"), else the single field the report points at. */
function fieldsOf(report: ServerError, constraintSuffix: string): string[] {
  const key = /^Key \((.+?)\)=\(/.exec(report.detail ?? '')?.[1]
  const columns = key ? splitKeyColumns(key).map(columnOfKeyPart) : []
  const fields = [...new Set(columns.filter((column): column is string => column !== undefined))]
  return fields.length > 0 ? fields.map(fieldName) : [singleField(report, constraintSuffix)]
}

/** column_name, else the column a default constraint name (`<table>_<column>_<suffix>`) contains, else 'value'. */
function singleField(report: ServerError, constraintSuffix: string): string {
  if (report.column_name) return fieldName(report.column_name)
  const constraint = report.constraint_name
  if (!constraint) return 'value'
  let name = constraint
  if (report.table_name && name.startsWith(`${report.table_name}_`))
    name = name.slice(report.table_name.length + 1)
  if (name.endsWith(constraintSuffix) && name.length > constraintSuffix.length) {
    name = name.slice(0, -constraintSuffix.length)
  }
  return fieldName(name)
}

/** Splits "a, lower((b)::text)" at its top-level commas. */
function splitKeyColumns(key: string): string[] {
  const parts: string[] = []
  let depth = 0
  let quoted = false
  let current = ''
  for (const char of key) {
    if (char === '"') quoted = !quoted
    else if (!quoted && char === '(') depth++
    else if (!quoted && char === ')') depth--
    if (char === ',' && !quoted && depth === 0) {
      parts.push(current.trim())
      current = ''
    } else {
      current += char
    }
  }
  parts.push(current.trim())
  return parts
}

/** The column of one key part: a plain or quoted name, or the first column inside an expression like lower(email). */
function columnOfKeyPart(part: string): string | undefined {
  const withoutCasts = part.replace(/::\s*(?:"[^"]*"|[a-z_][\w ]*)(?:\[\])?/gi, '')
  // a name followed by "(" is a function's (group 3), not a column's: skipped in code rather than by a lookahead
  for (const identifier of withoutCasts.matchAll(/"((?:[^"]|"")+)"|\b([a-z_][\w$]*)\b(\s*\()?/gi)) {
    if (identifier[1] !== undefined) return identifier[1].replaceAll('""', '"')
    if (identifier[3] === undefined) return identifier[2]
  }
  return undefined
}

function duplicateKeyFields(report: ServerError): string[] {
  const key = report.keyPattern ?? report.keyValue
  const fields = key ? Object.keys(key) : []
  return fields.length > 0 ? fields : ['value']
}

/** The API name of a column, the same as the result-column transform gives it (created_at -> createdAt). */
function fieldName(column: string): string {
  try {
    return postgres.toCamel(column) || column
  } catch {
    // toCamel reads past a trailing underscore
    return column
  }
}

/**
 * For the chassis' `errorMappers`: the database's own errors become their AppError (mapDatabaseError); anything
 * else is left to the next mapper and the error table.
 */
export function databaseErrorMapper(error: unknown): AppError | undefined {
  return isDatabaseError(error) || isDatabaseUnavailable(error) ? mapDatabaseError(error) : undefined
}
