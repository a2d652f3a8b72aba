// Mutation.createPost against the content app on its own database: who may post as whom, an unknown author, a
// user whose user.registered has not arrived yet, every argument's rules, and post.created written with the post
// (the outbox) — or nothing at all when the mutation is refused.
import { randomUUID } from 'node:crypto'
import { accessToken, eventually, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'
import { graphql, registeredUser, type TestUser } from './support/graphql.ts'

let content: ContentTestApp
let writer: TestUser
let other: TestUser
let admin: TestUser

const createPost = /* GraphQL */ `
  mutation($title: String!, $content: String!, $authorId: ID!) {
    createPost(title: $title, content: $content, authorId: $authorId) {
      id title content createdAt author { id name }
    }
  }
`

interface Created {
  createPost: {
    id: string
    title: string
    content: string
    createdAt: string
    author: { id: string; name: string }
  }
}

/** What the database holds: posts and outbox rows. */
async function stored() {
  const posts = await content.sql<{ id: string; authorId: string; title: string; content: string }[]>`
    select id, author_id, title, content from posts order by created_at`
  const outbox = await content.sql<
    { eventType: string; aggregateId: string; payload: Record<string, unknown> }[]
  >`
    select event_type, aggregate_id, payload from outbox order by id`
  return { posts, outbox }
}

beforeAll(async () => {
  content = await buildContentTestApp({ ...tokenEnv })
  writer = await registeredUser(content, { name: 'Wren Writer' })
  other = await registeredUser(content, { name: 'Otto Other' })
  admin = await registeredUser(content, { role: 'admin', name: 'Ada Admin' })
})

afterAll(() => content?.close())

describe('content: Mutation.createPost', () => {
  it('when a user posts as themself, then the post is answered and stored, and its post.created is in the outbox with it', async () => {
    const before = await stored()
    const answer = await graphql<Created>(content, createPost, {
      variables: { title: '  First light  ', content: 'Hello, world', authorId: writer.id },
      headers: writer.headers,
    })
    expect(answer.status).toBe(200)
    const post = answer.body.data!.createPost
    // stored trimmed
    expect(post).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'First light',
      content: 'Hello, world',
      createdAt: expect.any(String),
      author: { id: writer.id, name: 'Wren Writer' },
    })
    const after = await stored()
    expect(after.posts).toHaveLength(before.posts.length + 1)
    expect(after.posts.at(-1)).toEqual({
      id: post.id,
      authorId: writer.id,
      title: 'First light',
      content: 'Hello, world',
    })
    expect(after.outbox.slice(before.outbox.length)).toEqual([
      {
        eventType: 'post.created',
        aggregateId: post.id,
        payload: expect.objectContaining({
          type: 'post.created',
          source: 'content',
          schemaVersion: '1.0.0',
          data: { postId: post.id, authorId: writer.id, title: 'First light' },
        }),
      },
    ])
  })

  it("when an admin posts as another user, then the post is that user's", async () => {
    const answer = await graphql<Created>(content, createPost, {
      variables: { title: 'On behalf', content: 'Written by an admin', authorId: writer.id },
      headers: admin.headers,
    })
    expect(answer.body.errors).toBeUndefined()
    expect(answer.body.data!.createPost.author).toEqual({ id: writer.id, name: 'Wren Writer' })
  })

  it('when a user posts as another user, then FORBIDDEN (403) and nothing is written', async () => {
    const before = await stored()
    const answer = await graphql(content, createPost, {
      variables: { title: 'Forged', content: 'Not mine to write', authorId: writer.id },
      headers: other.headers,
    })
    expect(answer.status).toBe(403)
    expect(answer.body).toEqual({
      data: null,
      errors: [
        expect.objectContaining({
          message: 'You may only post as yourself',
          path: ['createPost'],
          extensions: { code: 'FORBIDDEN', requestId: answer.headers['x-request-id'] },
        }),
      ],
    })
    expect(await stored()).toEqual(before)
  })

  it('when an admin posts as a user content does not know, then NOT_FOUND (404) and nothing is written', async () => {
    const before = await stored()
    const nobody = randomUUID()
    const answer = await graphql(content, createPost, {
      variables: { title: 'To nobody', content: 'x', authorId: nobody },
      headers: admin.headers,
    })
    expect(answer.status).toBe(404)
    expect(answer.body.errors?.[0]).toMatchObject({
      message: `User ${nobody} not found`,
      extensions: { code: 'NOT_FOUND' },
    })
    expect(await stored()).toEqual(before)
  })

  it('when a signed-in user posts before their user.registered arrived, then they post as the user their token names', async () => {
    const newcomer = randomUUID()
    const headers = { authorization: `Bearer ${accessToken('user', newcomer)}` }
    const answer = await graphql<Created>(content, createPost, {
      variables: { title: 'Day one', content: 'Just registered', authorId: newcomer },
      headers,
    })
    expect(answer.body.errors).toBeUndefined()
    // the test token's name claim
    expect(answer.body.data!.createPost.author).toEqual({ id: newcomer, name: 'user of the tests' })
    // ... and the user's own event, when it comes, replaces what the token said
    await content.sql.begin((tx) =>
      content.users.applyRegistered(
        {
          userId: newcomer,
          name: 'Nell Newcomer',
          email: 'nell@example.com',
          role: 'user',
          status: 'active',
        },
        tx,
      ),
    )
    const read = await graphql(content, 'query($id: ID!) { user(id: $id) { name email } }', {
      variables: { id: newcomer },
      headers,
    })
    expect(read.body.data).toEqual({ user: { name: 'Nell Newcomer', email: 'nell@example.com' } })
  })

  it('when a removed user posts with a token still in hand, then NOT_FOUND and nothing is written', async () => {
    const leaver = await registeredUser(content)
    await content.sql.begin((tx) => content.users.applyRemoved({ userId: leaver.id }, tx))
    const before = await stored()
    const answer = await graphql(content, createPost, {
      variables: { title: 'From beyond', content: 'x', authorId: leaver.id },
      headers: leaver.headers,
    })
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' })
    expect(await stored()).toEqual(before)
  })

  it('when a user is removed while they post, then the post waits for the removal and is refused: no post outlives its author', async () => {
    const leaver = await registeredUser(content)
    let removed!: () => void
    const removing = new Promise<void>((resolve) => {
      removed = resolve
    })
    let commit!: () => void
    const committed = new Promise<void>((resolve) => {
      commit = resolve
    })
    // user.removed applied in a transaction held open: the user's row is taken
    const removal = content.sql.begin(async (tx) => {
      await content.users.applyRemoved({ userId: leaver.id }, tx)
      removed()
      await committed
    })
    await removing
    const posting = graphql(content, createPost, {
      variables: { title: 'Last words', content: 'x', authorId: leaver.id },
      headers: leaver.headers,
    })
    // the post's write is waiting for the removal's lock on the user's row
    await eventually('the post waits for the lock', async () => {
      const [waiting] = await content.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`
      return (waiting?.n ?? 0) > 0
    })
    commit()
    await removal
    const answer = await posting
    expect(answer.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND')
    expect(await content.sql`select id from posts where author_id = ${leaver.id}`).toHaveLength(0)
  })

  it('when an argument breaks its rule, then VALIDATION_ERROR (422) names every field at fault and nothing is written', async () => {
    const before = await stored()
    const cases: [Record<string, unknown>, string[]][] = [
      [{ title: '', content: 'x', authorId: writer.id }, ['title']],
      [{ title: ' \t\n ', content: 'x', authorId: writer.id }, ['title']],
      [{ title: 't'.repeat(201), content: 'x', authorId: writer.id }, ['title']],
      [{ title: 'ok', content: 'c'.repeat(50_001), authorId: writer.id }, ['content']],
      [{ title: 'nul\u0000', content: ' ', authorId: 'not-a-uuid' }, ['title', 'content', 'authorId']],
    ]
    for (const [variables, fields] of cases) {
      const answer = await graphql(content, createPost, { variables, headers: admin.headers })
      expect(answer.status, JSON.stringify(variables).slice(0, 80)).toBe(422)
      const { extensions } = answer.body.errors![0]!
      expect(extensions.code).toBe('VALIDATION_ERROR')
      // a field may break more than one rule (an empty title is too short and has nothing visible)
      const named = new Set((extensions.details as { field: string }[]).map(({ field }) => field))
      expect([...named].sort()).toEqual([...fields].sort())
    }
    expect(await stored()).toEqual(before)
  })

  it('when an argument is missing or of the wrong type, then GraphQL refuses the document (400) and nothing is written', async () => {
    const before = await stored()
    const missing = await graphql(content, 'mutation { createPost(title: "t", content: "c") { id } }', {
      headers: writer.headers,
    })
    expect(missing.status).toBe(400)
    expect(missing.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('argument "authorId" of type "ID!" is required'),
      extensions: { code: 'VALIDATION_ERROR' },
    })
    const wrongType = await graphql(content, createPost, {
      variables: { title: 42, content: 'c', authorId: writer.id },
      headers: writer.headers,
    })
    expect(wrongType.status).toBe(400)
    expect(wrongType.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR')
    expect(await stored()).toEqual(before)
  })

  it('when nobody is signed in, then UNAUTHORIZED (401) and nothing is written', async () => {
    const before = await stored()
    const answer = await graphql(content, createPost, {
      variables: { title: 'Anonymous', content: 'x', authorId: writer.id },
    })
    expect(answer.status).toBe(401)
    expect(answer.body.errors?.[0]).toMatchObject({
      message: 'Missing token',
      extensions: { code: 'UNAUTHORIZED' },
    })
    expect(await stored()).toEqual(before)
  })
})
