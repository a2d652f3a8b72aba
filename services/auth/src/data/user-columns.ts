// The users table's columns by API field, and a sort key over them: data-layer facts that the repository builds SQL
// from and the list query's parsing checks requests against.
import type { UserField } from '@meridian/contracts'

/** API field name -> column. The only names that ever reach SQL as identifiers. */
export const userColumns: Record<UserField, string> = {
  id: 'id',
  name: 'name',
  email: 'email',
  role: 'role',
  status: 'status',
  age: 'age',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

export interface SortKey {
  column: string
  descending: boolean
}
