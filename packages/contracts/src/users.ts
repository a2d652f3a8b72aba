// The user resource: what clients send and receive, and which fields lists may sort and select.
import { type Static, Type } from 'typebox'
import { listQueryParameters, QueryObject } from './pagination.ts'
import { Nullable, StringEnum, Text, VisibleText } from './schema-kinds.ts'

export const userRoles = ['user', 'admin'] as const
/**
 * `invited`: created by an admin without a password (e.g. GraphQL `createUser`); cannot sign in until an admin sets
 * a password (PUT /users/{id}/password), which makes the user active.
 */
export const userStatuses = ['active', 'inactive', 'suspended', 'invited'] as const

export const UserRole = StringEnum(userRoles)
export type UserRole = (typeof userRoles)[number]
export const UserStatus = StringEnum(userStatuses)
export type UserStatus = (typeof userStatuses)[number]

// stored trimmed: a name of spaces alone would be an empty name
const Name = VisibleText({ minLength: 1, maxLength: 200 })
const Email = Type.String({ format: 'email', maxLength: 254 })
const Age = Type.Integer({ minimum: 18, maximum: 150, description: 'must be 18 or older' })

export const User = Type.Object(
  {
    id: Type.String({ format: 'uuid', maxLength: 36 }),
    name: Name,
    email: Email,
    emailVerified: Type.Boolean({
      description:
        'whether the user proved the address is theirs (a link mailed to it was used); a changed address is unproved until then',
    }),
    role: UserRole,
    status: UserStatus,
    age: Nullable(Age),
    createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
    updatedAt: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { additionalProperties: false },
)
export type User = Static<typeof User>

/** Fields a list may sort on (`sort=field:asc|desc`) and select (`fields=`): allow-lists, never column names from input. */
export const userSortFields = ['name', 'email', 'age', 'role', 'status', 'createdAt', 'updatedAt'] as const
export const userFields = [
  'id',
  'name',
  'email',
  'emailVerified',
  'role',
  'status',
  'age',
  'createdAt',
  'updatedAt',
] as const
export type UserField = (typeof userFields)[number]

/** A user in a sparse list: any subset of the fields. */
export const PartialUser = Type.Partial(User)

export const CreateUserBody = Type.Object(
  {
    name: Name,
    email: Email,
    password: Type.Optional(
      Text({
        minLength: 8,
        maxLength: 200,
        description:
          'stored argon2id-hashed; never returned. Without one (admins only) the user is created `invited`: ' +
          'no sign-in until an admin sets a password',
      }),
    ),
    age: Type.Optional(Age),
    role: Type.Optional(UserRole),
    status: Type.Optional(UserStatus),
  },
  { additionalProperties: false },
)
export type CreateUserBody = Static<typeof CreateUserBody>

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    age: Type.Optional(Nullable(Age)),
    role: Type.Optional(UserRole),
    status: Type.Optional(UserStatus),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateUserBody = Static<typeof UpdateUserBody>

export const UserListQuery = QueryObject(
  {
    ...listQueryParameters({ sortFields: userSortFields, fields: userFields }),
    status: Type.Optional(UserStatus),
    role: Type.Optional(UserRole),
  },
  { additionalProperties: false },
)
export type UserListQuery = Static<typeof UserListQuery>

export const UserIdParams = Type.Object({ id: Type.String({ format: 'uuid', maxLength: 36 }) })
export type UserIdParams = Static<typeof UserIdParams>

/** PUT /users/{id}/password: your own needs the current password; an admin may set anyone's without it. */
export const ChangePasswordBody = Type.Object(
  {
    currentPassword: Type.Optional(
      Text({ minLength: 1, maxLength: 1024, description: 'required to change your own password' }),
    ),
    newPassword: Text({
      minLength: 8,
      maxLength: 200,
      description: 'stored argon2id-hashed; never returned',
    }),
  },
  { additionalProperties: false },
)
export type ChangePasswordBody = Static<typeof ChangePasswordBody>

/** POST /password-resets: the address a reset link is mailed to, if an account has it (the answer never tells). */
export const PasswordResetRequestBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254 }) },
  { additionalProperties: false },
)
export type PasswordResetRequestBody = Static<typeof PasswordResetRequestBody>

/** The one answer to a reset request, whether or not an account has the address. */
export const PasswordResetAccepted = Type.Object(
  { message: Type.String({ maxLength: 300 }) },
  { additionalProperties: false },
)
export type PasswordResetAccepted = Static<typeof PasswordResetAccepted>

/** POST /password-resets/{token}: the token of a reset link (any text is taken; one that is no link's is 400). */
export const PasswordResetTokenParams = Type.Object({
  token: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'the token at the end of the reset link (never logged: the logs show [redacted])',
  }),
})
export type PasswordResetTokenParams = Static<typeof PasswordResetTokenParams>

/** The new password of a reset: the rules of registration and of ChangePasswordBody. */
export const PasswordResetBody = Type.Object(
  {
    password: Text({ minLength: 8, maxLength: 200, description: 'stored argon2id-hashed; never returned' }),
  },
  { additionalProperties: false },
)
export type PasswordResetBody = Static<typeof PasswordResetBody>

/** POST /email-verifications/{token}: the token of a link mailed to an address (any text is taken; none that is no link's works). */
export const EmailVerificationTokenParams = Type.Object({
  token: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'the token at the end of the mailed link (never logged: the logs show [redacted])',
  }),
})
export type EmailVerificationTokenParams = Static<typeof EmailVerificationTokenParams>

/** POST /email-verifications: a new link to your own unverified address; no body, or an empty object. */
export const EmailVerificationRequestBody = Type.Object({}, { additionalProperties: false })
export type EmailVerificationRequestBody = Static<typeof EmailVerificationRequestBody>

/** The answer to a new verification link asked for: it is on its way to the account's address. */
export const EmailVerificationRequested = Type.Object(
  { message: Type.String({ maxLength: 300 }) },
  { additionalProperties: false },
)
export type EmailVerificationRequested = Static<typeof EmailVerificationRequested>

/** POST /users/{id}/email-change: your new address, with your password. */
export const EmailChangeBody = Type.Object(
  {
    email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'the new address: a link is mailed to it',
    }),
    password: Text({ minLength: 1, maxLength: 1024, description: 'your current password' }),
  },
  { additionalProperties: false },
)
export type EmailChangeBody = Static<typeof EmailChangeBody>

/** The answer to an address change asked for: the link is on its way to the new address. */
export const EmailChangeAccepted = Type.Object(
  { message: Type.String({ maxLength: 300 }) },
  { additionalProperties: false },
)
export type EmailChangeAccepted = Static<typeof EmailChangeAccepted>
