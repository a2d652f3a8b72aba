// Post use cases: lists (newest first, keyset pages) and createPost — the post and its post.created in one
// transaction (the outbox: the event is never lost nor sent for a post that was rolled back), then announced to the
// postCreated subscribers of every instance.
import { AppError, type CreatePostArgs, type PostsArgs, type PostView } from '@meridian/contracts'
import { type Sql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import { holdsRole, type Principal } from '@meridian/service-kit'
import type { PostRecord, PostsRepository } from '../data/posts-repository.ts'
import type { UsersRepository } from '../data/users-repository.ts'

/** The name content signs its events with (the envelope's source). */
export const serviceSource = 'content'

/**
 * Tells the live subscribers of every instance about a committed post. Live only: a subscriber that is not
 * connected then does not hear it (the durable record is post.created on the broker). Never rejects: a failure is
 * the announcer's to log, the post stands.
 */
export interface PostAnnouncer {
  announce(post: PostView): void
}

export interface PostUseCasesDependencies {
  posts: PostsRepository
  users: UsersRepository
  sql: Sql
  announcer: PostAnnouncer
}

export const postView = ({ id, title, content, authorId, createdAt }: PostRecord): PostView => ({
  id,
  title,
  content,
  authorId,
  createdAt: createdAt.toISOString(),
})

export function createPostUseCases({ posts, users, sql, announcer }: PostUseCasesDependencies) {
  return {
    /** A page of every post, newest first. */
    async listPosts(page: PostsArgs): Promise<PostView[]> {
      return (await posts.list(page)).map(postView)
    },

    /** A page of each author's posts, by author id, in one statement. */
    async postsByAuthors(authorIds: readonly string[], page: PostsArgs): Promise<Map<string, PostView[]>> {
      const byAuthor = new Map<string, PostView[]>(authorIds.map((id) => [id, []]))
      for (const post of await posts.listByAuthors([...byAuthor.keys()], page)) {
        byAuthor.get(post.authorId)?.push(postView(post))
      }
      return byAuthor
    },

    /**
     * A post of `authorId`: the caller's own, or anyone's for an admin (403 otherwise); the author must be a known
     * user (404). A user whose user.registered has not arrived yet posts as themself with the name and email their
     * credential carries (a token's claims, which auth signed, or an API key's owner; a cookie session carries
     * neither, so such a user waits for the event); the event replaces them.
     */
    async createPost(principal: Principal, input: CreatePostArgs): Promise<PostView> {
      const own = principal.kind === 'user' && principal.subject === input.authorId
      if (!own && !holdsRole(principal, ['admin'])) {
        throw AppError.forbidden('You may only post as yourself')
      }
      const created = await transaction(sql, async (tx) => {
        if (!(await users.holdActive(input.authorId, tx))) {
          const { name, email } = principal
          if (!own || !name || !email) throw AppError.notFound(`User ${input.authorId} not found`)
          const seeded = await users.apply(
            { id: input.authorId, name, email, role: principal.role, status: 'active', version: 0 },
            tx,
          )
          // not written: the user was removed (or has just arrived, which the second look finds)
          if (!seeded && !(await users.holdActive(input.authorId, tx))) {
            throw AppError.notFound(`User ${input.authorId} not found`)
          }
        }
        const post = await posts.insert(
          { authorId: input.authorId, title: input.title.trim(), content: input.content.trim() },
          tx,
        )
        const event = createEvent(
          'post.created',
          { postId: post.id, authorId: post.authorId, title: post.title },
          { source: serviceSource },
        )
        await appendToOutbox(tx, event, { aggregateId: post.id })
        return postView(post)
      })
      announcer.announce(created)
      return created
    },
  }
}

export type PostUseCases = ReturnType<typeof createPostUseCases>
