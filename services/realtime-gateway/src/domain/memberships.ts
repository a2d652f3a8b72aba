// Who may do what with a resource that has an owner and members (a chat room, a document), and adding and removing
// members, the same for both: members see it (anyone else is told it does not exist), the owner or an admin manages
// its members, a member may remove themselves, the owner is never removed.
import { AppError, type Member } from '@meridian/contracts'
import type { Principal } from '@meridian/service-kit'
import { holdsRole } from '@meridian/service-kit'
import type { MemberRecord, MembershipsRepository } from '../data/memberships.ts'

export const adminRole = 'admin'

export const isAdmin = (principal: Principal): boolean => holdsRole(principal, [adminRole])

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether an id can name a user or a row here (uuids; anything else names nothing, and must not reach SQL as one). */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

/**
 * The user id a principal owns and joins things as: a user's subject (auth's user ids are uuids), lower-cased as
 * PostgreSQL writes uuids; null for anyone else (an OAuth client), who is a member of nothing.
 */
export function memberIdOf(principal: Principal): string | null {
  return principal.kind === 'user' && isUuid(principal.subject) ? principal.subject.toLowerCase() : null
}

/** What the rules read of a resource. */
export interface MemberedResource {
  ownerId: string
  members: readonly string[]
}

export const isMemberOf = (resource: MemberedResource, userId: string | null): boolean =>
  userId !== null && resource.members.includes(userId)

/** Whether the principal may see the resource: a member, or an admin. */
export const maySee = (principal: Principal, resource: MemberedResource): boolean =>
  isAdmin(principal) || isMemberOf(resource, memberIdOf(principal))

/** Whether the principal may manage it (add members, remove anyone, delete it): the owner, or an admin. */
export const mayManage = (principal: Principal, resource: MemberedResource): boolean =>
  isAdmin(principal) || resource.ownerId === memberIdOf(principal)

/** The principal as an owner of a new resource; only users own things (403 for an OAuth client). */
export function ownerIdOf(principal: Principal, what: string): string {
  const ownerId = memberIdOf(principal)
  if (ownerId === null) throw AppError.forbidden(`Only users create ${what}`)
  return ownerId
}

export const presentMember = (member: MemberRecord): Member => ({
  userId: member.userId,
  joinedAt: member.joinedAt.toISOString(),
})

/**
 * What the realtime channel is told when someone may no longer be in a resource's room: the use cases never reach the
 * sockets themselves (channels/room-access.ts does, on every instance).
 */
export interface ChannelAccess {
  /** `userId` is no longer a member: their sockets leave the resource's room */
  memberRemoved(resourceId: string, userId: string): void
  /** the resource is gone: every socket leaves its room */
  removed(resourceId: string): void
}

/** Nobody to tell: use cases built without a channel (a test's data). */
export const noChannel: ChannelAccess = { memberRemoved: () => {}, removed: () => {} }

export interface MembershipUseCasesOptions<Resource extends MemberedResource> {
  /** e.g. 'Chat room': how the 404 names it */
  label: string
  find(id: string): Promise<Resource | undefined>
  members: MembershipsRepository
  access: ChannelAccess
}

/** Adding and removing members of one kind of resource. */
export function createMembershipUseCases<Resource extends MemberedResource>({
  label,
  find,
  members,
  access,
}: MembershipUseCasesOptions<Resource>) {
  /** The resource, if the principal may see it: a 404 otherwise (its existence is not told). */
  async function visible(id: string, principal: Principal): Promise<Resource> {
    const resource = await find(id)
    if (!resource || !maySee(principal, resource)) throw AppError.notFound(`${label} ${id} not found`)
    return resource
  }

  return {
    visible,

    /**
     * Adds `userId` as a member (the owner or an admin; another member is 403, anyone else 404). A member already is
     * answered as they are, with `created` false.
     */
    async addMember(
      id: string,
      userId: string,
      principal: Principal,
    ): Promise<{ member: Member; created: boolean }> {
      const resource = await visible(id, principal)
      if (!mayManage(principal, resource))
        throw AppError.forbidden(`Only the owner adds members to this ${label.toLowerCase()}`)
      const { member, created } = await members.add(id, userId.toLowerCase())
      return { member: presentMember(member), created }
    },

    /**
     * Removes `userId` (the owner or an admin; a member may remove themselves). The owner cannot be removed (409); a
     * user who is not a member is 404. Their sockets then leave the resource's room on the channel.
     */
    async removeMember(id: string, userId: string, principal: Principal): Promise<void> {
      const target = userId.toLowerCase()
      const resource = await visible(id, principal)
      const self = memberIdOf(principal) === target
      if (!self && !mayManage(principal, resource)) {
        throw AppError.forbidden(`Only the owner removes other members of this ${label.toLowerCase()}`)
      }
      if (resource.ownerId === target) {
        throw AppError.conflict(`The owner of this ${label.toLowerCase()} cannot be removed from it`)
      }
      if (!(await members.remove(id, target))) throw AppError.notFound(`User ${target} is not a member`)
      access.memberRemoved(id, target)
    },

    /** Whether the user is a member (a malformed id is a member of nothing). */
    async isMember(id: string, userId: string): Promise<boolean> {
      return isUuid(id) && isUuid(userId) && (await members.isMember(id, userId.toLowerCase()))
    },
  }
}
