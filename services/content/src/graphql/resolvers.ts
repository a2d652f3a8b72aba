// The resolvers: each checks its arguments against their schema in contracts (VALIDATION_ERROR with details), asks
// for the caller where the operation needs one, and calls a use case. Post.author and User.posts are loaders
// (loaders.ts): batched per operation, so a list with its authors is a fixed number of SQL statements.
import { CreatePostArgs, CreateUserArgs, PostsArgs, UserArgs } from '@meridian/contracts'
import { assertScopes, checkedValue, holdsRole } from '@meridian/service-kit'
import type { IResolvers, MercuriusContext } from 'mercurius'
import type { PostUseCases } from '../domain/posts.ts'
import type { UserRecord, UserUseCases } from '../domain/users.ts'
import { toMeridianGraphQLError } from './errors.ts'
import { deliveredInSpans } from './subscriptions.ts'

export interface ResolverDependencies {
  users: UserUseCases
  posts: PostUseCases
  /** the pub/sub topic of postCreated */
  postCreatedTopic: string
}

type Context = MercuriusContext

export function contentResolvers({ users, posts, postCreatedTopic }: ResolverDependencies): IResolvers {
  return {
    Query: {
      async user(_root: unknown, args: unknown, context: Context) {
        await context.principal()
        const { id } = checkedValue(UserArgs, args)
        return (await users.findUser(id)) ?? null
      },
      async posts(_root: unknown, args: unknown, context: Context) {
        await context.principal()
        return posts.listPosts(checkedValue(PostsArgs, args))
      },
    },

    // /graphql's own scope (posts:read) admits queries; a mutation needs its own as well (a scoped credential)
    Mutation: {
      async createUser(_root: unknown, args: unknown, context: Context) {
        const principal = await context.principal()
        assertScopes(principal, ['users:write'])
        return users.createUser(principal, checkedValue(CreateUserArgs, args), {
          credential: context.credentialHeaders(),
          requestId: context.requestId,
        })
      },
      async createPost(_root: unknown, args: unknown, context: Context) {
        const principal = await context.principal()
        assertScopes(principal, ['posts:write'])
        return posts.createPost(principal, checkedValue(CreatePostArgs, args))
      },
    },

    Subscription: {
      postCreated: {
        // graphql-js reports what this throws without mercurius's formatter: it is given its code here
        async subscribe(_root: unknown, _args: unknown, context: Context) {
          try {
            await context.principal()
          } catch (error) {
            throw toMeridianGraphQLError(error, context.requestId, context.app.log)
          }
          return deliveredInSpans(await context.pubsub.subscribe(postCreatedTopic), postCreatedTopic)
        },
      },
    },

    User: {
      /** the user's own, or an admin's to see */
      async email(user: UserRecord, _args: unknown, context: Context) {
        const principal = await context.principal()
        const allowed =
          (principal.kind === 'user' && principal.subject === user.id) || holdsRole(principal, ['admin'])
        return allowed ? user.email : null
      },
    },
  }
}
