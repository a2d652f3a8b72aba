// GraphQL queries against the content app on its own database: Query.posts and Query.user with every argument,
// User.posts, each field of Post and User, who sees User.email, GET and application/graphql, and how many SQL
// statements a list with its authors takes (the loaders).
import { randomUUID } from 'node:crypto'
import { graphqlLimits } from '@meridian/contracts'
import { tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'
import { graphql, registeredUser, type TestUser } from './support/graphql.ts'

let content: ContentTestApp
let alice: TestUser
let bob: TestUser
let admin: TestUser
/** every post of the suite, oldest first */
const written: { id: string; title: string; authorId: string }[] = []

interface PostItem {
  id: string
  title: string
  content?: string
  createdAt?: string
  author?: { id: string; name: string; email?: string | null; posts?: { title: string }[] }
}

async function createPost(author: TestUser, title: string): Promise<string> {
  const answer = await graphql<{ createPost: { id: string } }>(
    content,
    'mutation($title: String!, $authorId: ID!) { createPost(title: $title, content: "Words", authorId: $authorId) { id } }',
    { variables: { title, authorId: author.id }, headers: author.headers },
  )
  expect(answer.body.errors).toBeUndefined()
  const id = answer.body.data!.createPost.id
  written.push({ id, title, authorId: author.id })
  return id
}

/** Titles of `posts` as the client pages them. */
async function titles(query: string, variables?: Record<string, unknown>): Promise<string[]> {
  const answer = await graphql<{ posts: PostItem[] }>(content, query, { variables, headers: alice.headers })
  expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined()
  return answer.body.data!.posts.map((post) => post.title)
}

const newestFirst = () => [...written].reverse().map((post) => post.title)

beforeAll(async () => {
  content = await buildContentTestApp({ ...tokenEnv })
  alice = await registeredUser(content, { name: 'Alice' })
  bob = await registeredUser(content, { name: 'Bob' })
  admin = await registeredUser(content, { role: 'admin', name: 'Ada Admin' })
  // 25 posts, more than a default page, by three authors taking turns
  const authors = [alice, bob, admin]
  for (let index = 0; index < 25; index++) await createPost(authors[index % 3]!, `Post ${index}`)
})

afterAll(() => content?.close())

describe('content: Query.posts', () => {
  it('when no limit is given, then the 20 newest posts come, newest first', async () => {
    expect(graphqlLimits.defaultPostsLimit).toBe(20)
    expect(await titles('{ posts { title } }')).toEqual(newestFirst().slice(0, 20))
  })

  it('when a limit is given (written or as a variable), then that many come', async () => {
    expect(await titles('{ posts(limit: 3) { title } }')).toEqual(newestFirst().slice(0, 3))
    expect(await titles('query($n: Int) { posts(limit: $n) { title } }', { n: 7 })).toEqual(
      newestFirst().slice(0, 7),
    )
    expect(await titles('{ posts(limit: 100) { title } }')).toEqual(newestFirst())
  })

  it('when after names the last post of a page, then the next page follows it without overlap or gap', async () => {
    const pages: string[] = []
    let after: string | undefined
    for (;;) {
      const answer = await graphql<{ posts: PostItem[] }>(
        content,
        'query($after: ID) { posts(limit: 10, after: $after) { id title } }',
        { variables: { after }, headers: alice.headers },
      )
      const page = answer.body.data!.posts
      pages.push(...page.map((post) => post.title))
      if (page.length < 10) break
      after = page.at(-1)!.id
    }
    expect(pages).toEqual(newestFirst())
  })

  it('when after names no post, then the page is empty', async () => {
    expect(
      await titles('query($after: ID) { posts(after: $after) { title } }', { after: randomUUID() }),
    ).toEqual([])
  })

  it('when the limit is 0, negative or above 100, then VALIDATION_ERROR names limit with what was sent', async () => {
    for (const limit of [0, -1, 101, 100_000]) {
      const answer = await graphql(content, `{ posts(limit: ${limit}) { title } }`, {
        headers: alice.headers,
      })
      expect(answer.status, String(limit)).toBe(422)
      expect(answer.body.data).toBeNull()
      expect(answer.body.errors).toEqual([
        expect.objectContaining({
          message: 'Validation failed',
          path: ['posts'],
          extensions: {
            code: 'VALIDATION_ERROR',
            requestId: answer.headers['x-request-id'],
            details: [expect.objectContaining({ field: 'limit', received: String(limit) })],
          },
        }),
      ])
    }
  })

  it('when after is not a post id (not a UUID), then VALIDATION_ERROR names after', async () => {
    const answer = await graphql(content, '{ posts(after: "42; drop table posts") { title } }', {
      headers: alice.headers,
    })
    expect(answer.status).toBe(422)
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: 'after', message: 'must match format "uuid"' })],
    })
  })

  it('when a limit is not an Int, then GraphQL refuses the document: VALIDATION_ERROR, status 400, nothing runs', async () => {
    const answer = await graphql(content, '{ posts(limit: "ten") { title } }', { headers: alice.headers })
    expect(answer.status).toBe(400)
    expect(answer.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('Int cannot represent non-integer value'),
      extensions: { code: 'VALIDATION_ERROR' },
    })
  })

  it('when each field of Post is asked, then each is there: id, title, content, createdAt (ISO 8601), author', async () => {
    const answer = await graphql<{ posts: PostItem[] }>(
      content,
      '{ posts(limit: 1) { id title content createdAt author { id name } } }',
      { headers: bob.headers },
    )
    const newest = written.at(-1)!
    const author = [alice, bob, admin].find((user) => user.id === newest.authorId)!
    expect(answer.body.data!.posts).toEqual([
      {
        id: newest.id,
        title: newest.title,
        content: 'Words',
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        author: { id: author.id, name: author.name },
      },
    ])
  })
})

describe('content: Query.user and User', () => {
  it('when the user exists, then id, name and their posts (newest first) come; User.posts takes limit and after', async () => {
    const query =
      'query($id: ID!, $after: ID) { user(id: $id) { id name posts(limit: 3, after: $after) { id title } } }'
    const first = await graphql<{ user: { id: string; name: string; posts: PostItem[] } }>(content, query, {
      variables: { id: bob.id },
      headers: alice.headers,
    })
    const bobs = newestFirst().filter(
      (title) => written.find((post) => post.title === title)!.authorId === bob.id,
    )
    expect(first.body.data!.user).toMatchObject({ id: bob.id, name: 'Bob' })
    expect(first.body.data!.user.posts.map((post) => post.title)).toEqual(bobs.slice(0, 3))
    const next = await graphql<{ user: { posts: PostItem[] } }>(content, query, {
      variables: { id: bob.id, after: first.body.data!.user.posts.at(-1)!.id },
      headers: alice.headers,
    })
    expect(next.body.data!.user.posts.map((post) => post.title)).toEqual(bobs.slice(3, 6))
  })

  it('when User.posts is not given a limit, then it gives up to 20; a limit above 100 is VALIDATION_ERROR', async () => {
    const answer = await graphql<{ user: { posts: PostItem[] } }>(
      content,
      'query($id: ID!) { user(id: $id) { posts { title } } }',
      { variables: { id: alice.id }, headers: alice.headers },
    )
    expect(answer.body.data!.user.posts).toHaveLength(
      written.filter((post) => post.authorId === alice.id).length,
    )
    const tooMany = await graphql(
      content,
      'query($id: ID!) { user(id: $id) { posts(limit: 101) { title } } }',
      {
        variables: { id: alice.id },
        headers: alice.headers,
      },
    )
    expect(tooMany.body.errors?.[0]).toMatchObject({
      path: ['user', 'posts'],
      extensions: { code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'limit' })] },
    })
  })

  it('when no user has the id, then user is null and there is no error', async () => {
    const answer = await graphql(content, 'query($id: ID!) { user(id: $id) { id } }', {
      variables: { id: randomUUID() },
      headers: alice.headers,
    })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ data: { user: null } })
  })

  it('when the id is not a UUID, then user is null beside VALIDATION_ERROR naming id (User is nullable: 200)', async () => {
    const answer = await graphql(content, '{ user(id: "1 or 1=1") { id } }', { headers: alice.headers })
    expect(answer.status).toBe(200)
    expect(answer.body.data).toEqual({ user: null })
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: 'id', received: '1 or 1=1' })],
    })
  })

  it('when a user reads their own email, then it is there; another user reads null; an admin reads it', async () => {
    const query = 'query($id: ID!) { user(id: $id) { email } }'
    const own = await graphql(content, query, { variables: { id: alice.id }, headers: alice.headers })
    const other = await graphql(content, query, { variables: { id: alice.id }, headers: bob.headers })
    const byAdmin = await graphql(content, query, { variables: { id: alice.id }, headers: admin.headers })
    expect(own.body.data).toEqual({ user: { email: alice.email } })
    expect(other.body.data).toEqual({ user: { email: null } })
    expect(byAdmin.body.data).toEqual({ user: { email: alice.email } })
  })

  it('when posts ask for their authors emails, then each reader sees only their own (and an admin all)', async () => {
    const query = '{ posts(limit: 3) { author { id email } } }'
    const asBob = await graphql<{ posts: PostItem[] }>(content, query, { headers: bob.headers })
    for (const { author } of asBob.body.data!.posts) {
      expect(author!.email).toBe(author!.id === bob.id ? bob.email : null)
    }
    const asAdmin = await graphql<{ posts: PostItem[] }>(content, query, { headers: admin.headers })
    expect(asAdmin.body.data!.posts.every(({ author }) => typeof author!.email === 'string')).toBe(true)
  })
})

describe('content: loaders (SQL statements per operation)', () => {
  /** The statements one operation sends. */
  async function statementsOf(query: string): Promise<string[]> {
    content.sent.reset()
    const answer = await graphql(content, query, { headers: alice.headers })
    expect(answer.body.errors).toBeUndefined()
    return [...content.sent.statements]
  }

  it('when posts are read with their authors, then it is two statements whether 2 posts or 25 (three authors)', async () => {
    for (const limit of [2, 25]) {
      const statements = await statementsOf(`{ posts(limit: ${limit}) { title author { name } } }`)
      expect(statements, statements.join('\n')).toHaveLength(2)
      expect(statements[0]).toMatch(/from posts/)
      expect(statements[1]).toMatch(/from users where id = any/)
    }
  })

  it('when posts are read with their authors and each author with their posts, then it is three statements', async () => {
    const statements = await statementsOf(
      '{ posts(limit: 25) { author { name posts(limit: 2) { title } } } }',
    )
    expect(statements, statements.join('\n')).toHaveLength(3)
    expect(statements[2]).toMatch(/cross join lateral/)
  })
})

describe('content: GraphQL over HTTP', () => {
  it('when a query comes by GET, then it is answered as by POST', async () => {
    const answer = await content.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent('{ posts(limit: 1) { title } }')}`,
      headers: alice.headers,
    })
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ data: { posts: [{ title: written.at(-1)!.title }] } })
  })

  it('when a mutation comes by GET, then it is refused and nothing is written', async () => {
    const before = written.length
    const answer = await content.app.inject({
      method: 'GET',
      url: `/graphql?query=${encodeURIComponent(
        `mutation { createPost(title: "By GET", content: "x", authorId: "${alice.id}") { id } }`,
      )}`,
      headers: alice.headers,
    })
    expect(answer.statusCode).toBe(405)
    expect(answer.json()).toEqual({
      data: null,
      errors: [
        {
          message: 'Operation cannot be performed via a GET request',
          extensions: { code: 'METHOD_NOT_ALLOWED', requestId: answer.headers['x-request-id'] },
        },
      ],
    })
    const rows = await content.sql`select id from posts where title = 'By GET'`
    expect(rows).toHaveLength(0)
    expect(written).toHaveLength(before)
  })

  it('when the body is application/graphql, then the body is the query', async () => {
    const answer = await content.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...alice.headers, 'content-type': 'application/graphql' },
      payload: '{ posts(limit: 1) { title } }',
    })
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ data: { posts: [{ title: written.at(-1)!.title }] } })
  })
})
