// Turns a list request's sort and fields parameters into allow-listed columns; anything else is a 422, never SQL.
import { AppError, type ErrorDetail, type UserField, userFields, userSortFields } from '@meridian/contracts'
import { type SortKey, userColumns } from '../data/user-columns.ts'

export const defaultSort: SortKey[] = [{ column: 'created_at', descending: true }]

/** `name:asc,createdAt:desc` -> sort keys; unknown fields are a validation error naming the allowed ones. */
export function parseUserSort(sort: string | undefined): SortKey[] {
  if (!sort) return defaultSort
  const problems: ErrorDetail[] = []
  const keys = sort.split(',').map((part) => {
    const [field = '', direction = 'asc'] = part.split(':')
    if (!(userSortFields as readonly string[]).includes(field)) {
      problems.push({
        field: 'sort',
        message: `cannot sort by '${field}'; allowed: ${userSortFields.join(', ')}`,
        received: part,
      })
    }
    return { column: userColumns[field as UserField] ?? '', descending: direction === 'desc' }
  })
  if (problems.length > 0) throw AppError.validation(problems)
  return keys
}

/** `id,name` -> the selected fields (id always included, so items stay addressable); unknown names -> 422. */
export function parseUserFields(fields: string | undefined): UserField[] {
  if (!fields) return [...userFields]
  const requested = fields.split(',')
  const unknown = requested.filter((field) => !(userFields as readonly string[]).includes(field))
  if (unknown.length > 0) {
    throw AppError.validation(
      unknown.map((field) => ({
        field: 'fields',
        message: `unknown field '${field}'; allowed: ${userFields.join(', ')}`,
        received: field,
      })),
    )
  }
  return [...new Set<UserField>(['id', ...(requested as UserField[])])]
}
