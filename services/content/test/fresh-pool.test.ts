// The repositories' lists of ids on a pool that has just opened: the first statement of a connection is sent before
// it has loaded PostgreSQL's types, and must not depend on them (a postCreated delivered by an instance that had
// just started once lost its author to "malformed array literal").
import { randomUUID } from 'node:crypto'
import { createDatabase } from '@meridian/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostsRepository } from '../src/data/posts-repository.ts'
import { createUsersRepository } from '../src/data/users-repository.ts'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'

let content: ContentTestApp
const author = randomUUID()

beforeAll(async () => {
  content = await buildContentTestApp()
  const users = createUsersRepository(content.sql)
  await users.apply({
    id: author,
    name: 'Fresh',
    email: 'fresh@example.com',
    role: 'user',
    status: 'active',
    version: 1,
  })
  await createPostsRepository(content.sql).insert({ authorId: author, title: 'First', content: 'x' })
})

afterAll(() => content?.close())

describe('content: lists of ids on a new pool', () => {
  it('when the first statement of a new connection looks users up by ids, then they are found', async () => {
    const fresh = createDatabase(content.database.url, { max: 1 })
    try {
      const found = await createUsersRepository(fresh).findByIds([author, randomUUID()])
      expect(found.map((user) => user.id)).toEqual([author])
    } finally {
      await fresh.end()
    }
  })

  it("when the first statement of a new connection lists authors' posts, then they are found", async () => {
    const fresh = createDatabase(content.database.url, { max: 1 })
    try {
      const posts = await createPostsRepository(fresh).listByAuthors([author], { limit: 5 })
      expect(posts.map((post) => post.title)).toEqual(['First'])
    } finally {
      await fresh.end()
    }
  })
})
