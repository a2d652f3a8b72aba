// Users as content knows them: a projection of auth's user events (applied in the consumer's transaction, newest
// version wins, a removal is final and takes the user's posts), and createUser, which asks auth and records auth's
// answer at once so that the new user can be given posts before their user.registered arrives.
import { AppError, type CreateUserArgs, type EventData } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'
import { holdsRole, type Principal } from '@meridian/service-kit'
import type { UserDirectory } from '../clients/user-directory.ts'
import type { UserRecord, UsersRepository } from '../data/users-repository.ts'

/** A user as the entry points (GraphQL) see it: they read users through these use cases, never the repository. */
export type { UserRecord }

export interface UserUseCasesDependencies {
  users: UsersRepository
  directory: UserDirectory
}

/** A new user's version in auth: user.registered describes version 1. */
const firstVersion = 1

export function createUserUseCases({ users, directory }: UserUseCasesDependencies) {
  return {
    /** The user, or undefined when unknown or removed. */
    findUser: (id: string): Promise<UserRecord | undefined> => users.findById(id),

    /** The users among `ids`, by id, in one statement. */
    async usersByIds(ids: readonly string[]): Promise<Map<string, UserRecord>> {
      const found = await users.findByIds([...new Set(ids)])
      return new Map(found.map((user) => [user.id, user]))
    },

    /**
     * Creates an invited user in auth (admins only; auth checks too, with the caller's own credential) and keeps
     * auth's answer as version 1, which the user's user.registered then confirms.
     */
    async createUser(
      principal: Principal,
      input: CreateUserArgs,
      on: { credential: Record<string, string>; requestId: string },
    ): Promise<UserRecord> {
      if (!holdsRole(principal, ['admin'])) throw AppError.forbidden('Only an admin may create a user')
      const created = await directory.invite(input, on)
      const user: UserRecord = {
        id: created.id,
        name: created.name,
        email: created.email,
        role: created.role,
        status: created.status,
        version: firstVersion,
      }
      await users.apply(user)
      return user
    },

    /** user.registered: the user at version 1 (`status` is absent from 1.0.0 events, whose users were active). */
    async applyRegistered(data: EventData<'user.registered'>, tx: Queryable): Promise<void> {
      const { userId: id, name, email, role, status = 'active' } = data
      await users.apply({ id, name, email, role, status, version: firstVersion }, tx)
    },

    /** user.profile_changed: the user's state at `version`, unless a newer one is known. */
    async applyProfileChanged(data: EventData<'user.profile_changed'>, tx: Queryable): Promise<void> {
      const { userId: id, name, email, role, status, version } = data
      await users.apply({ id, name, email, role, status, version }, tx)
    },

    /** user.removed: the user is gone for good, and their posts with them. */
    async applyRemoved(data: EventData<'user.removed'>, tx: Queryable): Promise<void> {
      await users.remove(data.userId, tx)
    },
  }
}

export type UserUseCases = ReturnType<typeof createUserUseCases>
