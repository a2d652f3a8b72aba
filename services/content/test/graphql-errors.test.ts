// Every way a GraphQL request fails, as the client sees it: the spec's codes in `extensions.code` with the request
// id, the HTTP status, GraphQL's own response shape even for failures before GraphQL runs (bad JSON, media type,
// size, rate limit), the depth and cost limits, a database failure shown generically — and no credential in the logs.
import { randomUUID } from 'node:crypto'
import { authNames } from '@meridian/contracts'
import { accessToken, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'
import { type GraphQLAnswer, graphql, registeredUser, type TestUser } from './support/graphql.ts'

let content: ContentTestApp
let reader: TestUser

beforeAll(async () => {
  content = await buildContentTestApp({ ...tokenEnv })
  reader = await registeredUser(content)
})

afterAll(() => content?.close())

/** The one error of an answer without data, with the answer's request id and the status expected. */
function expectOnlyError(answer: GraphQLAnswer, status: number, code: string, message?: string | RegExp) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(answer.body.data ?? null).toBeNull()
  expect(answer.body.errors).toHaveLength(1)
  const [error] = answer.body.errors!
  expect(error!.extensions).toMatchObject({ code, requestId: answer.headers['x-request-id'] })
  if (message !== undefined) expect(error!.message).toMatch(message)
}

/** A raw request to /graphql, answered as GraphQL. */
async function raw(payload: string, headers: Record<string, string>): Promise<GraphQLAnswer> {
  const answer = await content.app.inject({ method: 'POST', url: '/graphql', headers, payload })
  return { status: answer.statusCode, headers: answer.headers, body: answer.json() }
}

describe('content: authentication errors', () => {
  it('when there is no credential, then UNAUTHORIZED "Missing token" (401)', async () => {
    expectOnlyError(await graphql(content, '{ posts { id } }'), 401, 'UNAUTHORIZED', 'Missing token')
  })

  it("when the token is forged, expired or not a bearer, then UNAUTHORIZED with the spec's message", async () => {
    const forged = `${accessToken('user').slice(0, -4)}AAAA`
    const expired = accessToken('user', randomUUID(), { expiresInSeconds: -60 })
    for (const [authorization, message] of [
      [`Bearer ${forged}`, 'Invalid or expired token'],
      [`Bearer ${expired}`, 'Invalid or expired token'],
      [`Basic ${Buffer.from('a:b').toString('base64')}`, 'Missing token'],
    ] as const) {
      const answer = await graphql(content, '{ posts { id } }', { headers: { authorization } })
      expectOnlyError(answer, 401, 'UNAUTHORIZED', message)
    }
  })

  it('when the session cookie names no session, then UNAUTHORIZED "Invalid session"', async () => {
    const answer = await graphql(content, '{ posts { id } }', {
      headers: { cookie: `${authNames.sessionCookie}=${randomUUID()}` },
    })
    expectOnlyError(answer, 401, 'UNAUTHORIZED', 'Invalid session')
  })

  it("when an API key is put in the URL, then 401 before GraphQL runs, still in GraphQL's shape", async () => {
    const answer = await content.app.inject({
      method: 'POST',
      url: '/graphql?api_key=leaked',
      headers: { 'content-type': 'application/json', ...reader.headers },
      payload: JSON.stringify({ query: '{ posts { id } }' }),
    })
    expectOnlyError(
      { status: answer.statusCode, headers: answer.headers, body: answer.json() },
      401,
      'UNAUTHORIZED',
      'API keys are accepted only in the X-API-Key header',
    )
  })

  it('when a nullable field fails for want of a credential beside one that needs none, then 200 with both', async () => {
    // user is nullable: it is null beside its error, and the data (with __typename) is there
    const answer = await graphql(content, `{ __typename user(id: "${reader.id}") { id } }`)
    expect(answer.status).toBe(200)
    expect(answer.body.data).toEqual({ __typename: 'Query', user: null })
    expect(answer.body.errors?.[0]).toMatchObject({ path: ['user'], extensions: { code: 'UNAUTHORIZED' } })
  })

  it('when requests carried credentials, then no token, cookie or key value is in the logs', async () => {
    const token = accessToken('user')
    await graphql(content, '{ posts { id } }', { headers: { authorization: `Bearer ${token}` } })
    await graphql(content, '{ posts { id } }', {
      headers: { cookie: `${authNames.sessionCookie}=secret-session` },
    })
    const logged = JSON.stringify(content.logs)
    expect(logged).not.toContain(token.split('.')[2])
    expect(logged).not.toContain('secret-session')
  })
})

describe('content: documents refused before anything runs', () => {
  it("when the query does not parse, then BAD_REQUEST (400) with GraphQL's syntax message", async () => {
    expectOnlyError(
      await graphql(content, '{ posts { id ', { headers: reader.headers }),
      400,
      'BAD_REQUEST',
      /^Syntax Error/,
    )
  })

  it('when the query is JSON (a document already parsed, or any JSON value), then BAD_REQUEST: only GraphQL text runs', async () => {
    const ast = JSON.stringify({ kind: 'Document', definitions: [] })
    for (const query of ['0', 'null', '"posts"', ast]) {
      expectOnlyError(
        await graphql(content, query, { headers: reader.headers }),
        400,
        'BAD_REQUEST',
        'The query must be GraphQL text',
      )
    }
  })

  it('when there is no query at all, then VALIDATION_ERROR (422) naming query, by POST and by GET', async () => {
    const byPost = await raw(JSON.stringify({ variables: {} }), {
      'content-type': 'application/json',
      ...reader.headers,
    })
    expectOnlyError(byPost, 422, 'VALIDATION_ERROR')
    expect(byPost.body.errors?.[0]?.extensions.details).toEqual([
      expect.objectContaining({ field: 'query', message: "must have required property 'query'" }),
    ])
    const byGet = await content.app.inject({ method: 'GET', url: '/graphql?query=', headers: reader.headers })
    expect(byGet.statusCode).toBe(422)
    expect(byGet.json().errors[0].extensions).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: 'query' })],
    })
  })

  it('when the query names a field the schema does not have, then VALIDATION_ERROR (400)', async () => {
    expectOnlyError(
      await graphql(content, '{ posts { id password } }', { headers: reader.headers }),
      400,
      'VALIDATION_ERROR',
      'Cannot query field "password" on type "Post".',
    )
  })

  it('when a selection is deeper than 8, then VALIDATION_ERROR naming the limit; 8 deep is served', async () => {
    // posts(1) author(2) posts(3) author(4) posts(5) author(6) posts(7) title(8)
    const eight =
      '{ posts(limit: 1) { author { posts(limit: 1) { author { posts(limit: 1) { author { posts(limit: 1) { title } } } } } } } }'
    expect((await graphql(content, eight, { headers: reader.headers })).body.errors).toBeUndefined()
    const nine = eight.replace('{ title }', '{ author { name } }')
    expectOnlyError(
      await graphql(content, nine, { headers: reader.headers }),
      400,
      'VALIDATION_ERROR',
      'The operation is nested 9 deep, deeper than the limit of 8',
    )
  })

  it('when an operation costs more than 2000, then VALIDATION_ERROR with its cost, before any SQL', async () => {
    content.sent.reset()
    // 1 + 100 * (1 + 1 + 100 * 1) = 10 201
    const answer = await graphql(
      content,
      '{ posts(limit: 100) { author { posts(limit: 100) { title } } } }',
      {
        headers: reader.headers,
      },
    )
    expectOnlyError(answer, 400, 'VALIDATION_ERROR', 'The operation costs 10201, more than the limit of 2000')
    expect(content.sent.statements).toEqual([])
  })

  it('when the limit is a variable, then the cost counts the largest limit; fragments count too', async () => {
    const viaVariable = await graphql(
      content,
      'query($n: Int) { posts(limit: $n) { author { posts(limit: $n) { title } } } }',
      { variables: { n: 1 }, headers: reader.headers },
    )
    expectOnlyError(viaVariable, 400, 'VALIDATION_ERROR', /The operation costs 10201/)
    const viaFragment = await graphql(
      content,
      'query { posts(limit: 100) { ...Deep } } fragment Deep on Post { author { posts(limit: 100) { title } } }',
      { headers: reader.headers },
    )
    expectOnlyError(viaFragment, 400, 'VALIDATION_ERROR', /The operation costs 10201/)
  })

  it('when the schema is introspected, then it is served (introspection costs nothing)', async () => {
    const answer = await graphql<{ __schema: { types: { name: string }[] } }>(
      content,
      '{ __schema { types { name fields { name args { name } type { name ofType { name } } } } } }',
      { headers: reader.headers },
    )
    expect(answer.body.errors).toBeUndefined()
    expect(answer.body.data!.__schema.types.map((type) => type.name)).toEqual(
      expect.arrayContaining(['Query', 'Mutation', 'Subscription', 'Post', 'User']),
    )
  })
})

describe("content: HTTP failures in GraphQL's shape", () => {
  it('when the JSON body is malformed, then BAD_REQUEST (400)', async () => {
    expectOnlyError(
      await raw('{"query": "{ posts { id } }"', { 'content-type': 'application/json', ...reader.headers }),
      400,
      'BAD_REQUEST',
    )
  })

  it('when the body is neither JSON nor GraphQL, then UNSUPPORTED_MEDIA_TYPE (415)', async () => {
    expectOnlyError(
      await raw('query={posts{id}}', {
        'content-type': 'application/x-www-form-urlencoded',
        ...reader.headers,
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    )
  })

  it('when the body is larger than 1 MB, then PAYLOAD_TOO_LARGE (413)', async () => {
    const query = `{ posts { id } } # ${'x'.repeat(1024 * 1024)}`
    expectOnlyError(
      await raw(JSON.stringify({ query }), { 'content-type': 'application/json', ...reader.headers }),
      413,
      'PAYLOAD_TOO_LARGE',
    )
  })

  it('when the client sends an X-Request-Id, then the errors carry it', async () => {
    const requestId = `client-${randomUUID()}`
    const answer = await graphql(content, '{ posts { id } }', { headers: { 'x-request-id': requestId } })
    expect(answer.headers['x-request-id']).toBe(requestId)
    expect(answer.body.errors?.[0]?.extensions.requestId).toBe(requestId)
  })

  it("when the rate limit is used up, then RATE_LIMITED (429) with Retry-After, in GraphQL's shape", async () => {
    const limited = await buildContentTestApp({ ...tokenEnv, RATE_LIMIT_MAX: '2' })
    // the limit counts per client address across every app on this Redis: an address of this test's own
    const remoteAddress = `10.${[1, 2, 3].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`
    try {
      const answers: GraphQLAnswer[] = []
      for (let index = 0; index < 3; index++) {
        const answer = await limited.app.inject({
          method: 'POST',
          url: '/graphql',
          remoteAddress,
          headers: { 'content-type': 'application/json', ...reader.headers },
          payload: JSON.stringify({ query: '{ posts { id } }' }),
        })
        answers.push({ status: answer.statusCode, headers: answer.headers, body: answer.json() })
      }
      expect(answers.slice(0, 2).map((answer) => answer.status)).toEqual([200, 200])
      const refused = answers[2]!
      expectOnlyError(refused, 429, 'RATE_LIMITED')
      const retryAfter = Number(refused.headers['retry-after'])
      expect(retryAfter).toBeGreaterThan(0)
      expect(refused.body.errors?.[0]?.extensions.retryAfter).toBe(retryAfter)
    } finally {
      await limited.close()
    }
  })
})

describe('content: failures of the service itself', () => {
  it('when the database refuses the statement, then DB_ERROR (500) with a generic message, logged in full', async () => {
    await content.sql`alter table posts rename to posts_away`
    try {
      const answer = await graphql(content, '{ posts { id } }', { headers: reader.headers })
      expectOnlyError(answer, 500, 'DB_ERROR', 'A database error occurred')
      expect(JSON.stringify(answer.body)).not.toMatch(/posts_away|relation|select/)
      const logged = content.logs.find(
        (line) => line.requestId === answer.headers['x-request-id'] && line.level === 50,
      )
      expect((logged?.err as { message?: string } | undefined)?.message).toBe(
        'relation "posts" does not exist',
      )
    } finally {
      await content.sql`alter table posts_away rename to posts`
    }
  })
})
