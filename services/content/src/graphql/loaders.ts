// The batched fields (mercurius loaders): every Post.author of one operation is one SQL statement, and every
// User.posts of one operation is one per distinct page asked (limit, after).
import { AppError, PostsArgs, type PostView } from '@meridian/contracts'
import { checkedValue } from '@meridian/service-kit'
import type { MercuriusLoaders } from 'mercurius'
import type { PostUseCases } from '../domain/posts.ts'
import type { UserRecord, UserUseCases } from '../domain/users.ts'

export interface LoaderDependencies {
  users: UserUseCases
  posts: PostUseCases
}

interface Query<Obj, Params = Record<string, never>> {
  obj: Obj
  params: Params
}

export function contentLoaders({ users, posts }: LoaderDependencies): MercuriusLoaders {
  return {
    Post: {
      async author(queries: Query<PostView>[]) {
        const authors = await users.usersByIds(queries.map(({ obj }) => obj.authorId))
        // a post's author is never unknown: a removal deletes the user's posts in the same transaction
        return queries.map(
          ({ obj }) => authors.get(obj.authorId) ?? AppError.notFound(`User ${obj.authorId} not found`),
        )
      },
    },
    User: {
      async posts(queries: Query<UserRecord, unknown>[]) {
        // users asked for the same page are one statement
        const pages = new Map<string, { page: PostsArgs; authorIds: string[] }>()
        const keys = queries.map(({ obj, params }) => {
          const page = checkedValue(PostsArgs, params)
          const key = `${page.limit}:${page.after ?? ''}`
          const entry = pages.get(key) ?? { page, authorIds: [] }
          entry.authorIds.push(obj.id)
          pages.set(key, entry)
          return key
        })
        const answers = new Map<string, Map<string, PostView[]>>()
        await Promise.all(
          [...pages].map(async ([key, { page, authorIds }]) => {
            answers.set(key, await posts.postsByAuthors(authorIds, page))
          }),
        )
        return queries.map(({ obj }, index) => answers.get(keys[index]!)?.get(obj.id) ?? [])
      },
    },
  }
}
