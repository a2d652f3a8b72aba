// The users table's columns by API field, and its list (sort, fields, filters, search): data-layer facts that the
// repository builds SQL from and the list query's parsing checks requests against.
import { type UserField, userFields, userSortFields } from '@meridian/contracts'
import { defineList, type ListRequestOf } from '@meridian/db'

/** API field -> column. The only names that ever reach SQL as identifiers. */
export const userColumns: Record<UserField, string> = {
  id: 'id',
  name: 'name',
  email: 'email',
  emailVerified: 'email_verified',
  role: 'role',
  status: 'status',
  age: 'age',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

/**
 * GET /users: the allow-lists of contracts (sort, fields), status and role filters, and `q` over the stored
 * `search` vector (name and email, 'simple' configuration). Newest first, id breaking ties.
 */
export const userList = defineList({
  table: 'users',
  columns: userColumns,
  selectable: userFields,
  sortable: userSortFields,
  filterable: ['status', 'role'],
  search: { vector: 'search', config: 'simple' },
  defaultSort: 'createdAt:desc',
  alwaysSelected: ['id'],
})

export type UserListRequest = ListRequestOf<typeof userList>
