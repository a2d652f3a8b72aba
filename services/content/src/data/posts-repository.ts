// Posts in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open transaction. Lists are
// newest first, paged by keyset: `after` is the id of the last post of the previous page.
import type { Queryable } from '@meridian/db'

export interface PostRecord {
  id: string
  authorId: string
  title: string
  content: string
  createdAt: Date
}

export interface NewPost {
  authorId: string
  title: string
  content: string
}

export interface PostPage {
  limit: number
  /** the id of the last post already seen */
  after?: string | undefined
}

const columns = ['id', 'author_id', 'title', 'content', 'created_at']

export function createPostsRepository(db: Queryable) {
  return {
    async insert(post: NewPost, sql: Queryable = db): Promise<PostRecord> {
      const [row] = await sql<PostRecord[]>`
        insert into posts ${sql({ author_id: post.authorId, title: post.title, content: post.content })}
        returning ${sql(columns)}`
      return row!
    },

    /** A page of every post. An `after` that names no post gives an empty page. */
    async list({ limit, after }: PostPage, sql: Queryable = db): Promise<PostRecord[]> {
      if (after === undefined) {
        return sql<PostRecord[]>`
          select ${sql(columns)} from posts order by created_at desc, id desc limit ${limit}`
      }
      return sql<PostRecord[]>`
        select ${sql(columns)} from posts
        where (created_at, id) < (select created_at, id from posts where id = ${after})
        order by created_at desc, id desc limit ${limit}`
    },

    /**
     * A page of each author's posts, in one statement for any number of authors (a lateral join runs the page's
     * index scan once per author).
     */
    async listByAuthors(
      authorIds: readonly string[],
      { limit, after }: PostPage,
      sql: Queryable = db,
    ): Promise<PostRecord[]> {
      if (authorIds.length === 0) return []
      // a plain array, cast: sql.array() is serialized wrongly until the connection has loaded its types
      const authors = authorIds as string[]
      if (after === undefined) {
        return sql<PostRecord[]>`
          select page.* from unnest(${authors}::uuid[]) as author(id)
          cross join lateral (
            select ${sql(columns)} from posts where author_id = author.id
            order by created_at desc, id desc limit ${limit}
          ) as page
          order by page.author_id, page.created_at desc, page.id desc`
      }
      return sql<PostRecord[]>`
        select page.* from unnest(${authors}::uuid[]) as author(id)
        cross join lateral (
          select ${sql(columns)} from posts
          where author_id = author.id
            and (created_at, id) < (select created_at, id from posts where id = ${after})
          order by created_at desc, id desc limit ${limit}
        ) as page
        order by page.author_id, page.created_at desc, page.id desc`
    },
  }
}

export type PostsRepository = ReturnType<typeof createPostsRepository>
