// postCreated over WebSocket, against a listening app on real PostgreSQL and Redis: delivery over graphql-transport-ws
// and the legacy graphql-ws subprotocol, fan-out between instances that share a pub/sub prefix (and not beyond),
// credentials per subscribe (connection_init, upgrade headers, session cookie), the upgrade's Origin, refused
// connection_init payloads, a token's expiry closing the connection, validation of subscriptions, and disconnects.
import { randomBytes, randomUUID } from 'node:crypto'
import { authNames } from '@meridian/contracts'
import { accessToken, scaledMs, tokenEnv, waitMs } from '@meridian/testkit'
import { type Client, createClient } from 'graphql-ws'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildContentTestApp, type ContentTestApp, secondInstance } from './support/app.ts'
import { graphql, registeredUser, type TestUser } from './support/graphql.ts'
import {
  collect,
  legacyProtocol,
  localListeners,
  openConnection,
  type RawConnection,
  refusedUpgrade,
  soon,
  subscriptionUrl,
  transportProtocol,
  untilListening,
  type WsMessage,
} from './support/subscriptions.ts'

interface PostCreated {
  postCreated: {
    id: string
    title: string
    content?: string
    createdAt?: string
    author?: { id: string; name: string; email?: string | null }
  }
}

const allowedOrigin = 'http://localhost:8080'
const fullSelection = 'subscription { postCreated { id title content createdAt author { id name email } } }'
const idSelection = 'subscription { postCreated { id title } }'

const topicOf = (service: ContentTestApp) => `${service.config.CONTENT_PUBSUB_PREFIX}post.created`

/** Creates a post of `author` over HTTP on `service`, returning its id. */
async function createPost(service: Pick<ContentTestApp, 'app'>, author: TestUser, title: string) {
  const answer = await graphql<{ createPost: { id: string } }>(
    service,
    'mutation($title: String!, $author: ID!) { createPost(title: $title, content: "Body", authorId: $author) { id } }',
    { variables: { title, author: author.id }, headers: author.headers },
  )
  expect(answer.body.errors).toBeUndefined()
  return answer.body.data!.createPost.id
}

/** A message of subscription `id` of `type`. */
const messageOf =
  (type: string, id: string) =>
  (message: WsMessage): boolean =>
    message.type === type && message.id === id

/** The post a `data`/`next` message carries. */
const postIn = (message: WsMessage) => (message.payload as { data: PostCreated }).data.postCreated

describe('postCreated subscriptions over WebSocket', () => {
  let content: ContentTestApp
  let url: string
  /** what a test opened (clients, connections, extra apps), closed after it */
  const opened: (() => unknown)[] = []

  const graphqlWsClient = (connectionParams?: Record<string, unknown>, target = url): Client => {
    const client = createClient({
      url: target,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      ...(connectionParams ? { connectionParams } : {}),
    })
    opened.push(() => client.dispose())
    return client
  }

  const connect = async (options: Parameters<typeof openConnection>[1] = {}, target = url) => {
    const connection = await openConnection(target, options)
    opened.push(() => connection.close())
    return connection
  }

  /** A graphql-transport-ws connection initialised with `payload`, with subscription "1" of `query` sent. */
  const subscribed = async (
    { payload, headers = {} }: { payload?: unknown; headers?: Record<string, string> },
    query = idSelection,
  ): Promise<RawConnection> => {
    const connection = await connect({ protocol: transportProtocol, headers })
    connection.send({ type: 'connection_init', ...(payload === undefined ? {} : { payload }) })
    await connection.next((message) => message.type === 'connection_ack', 'connection_ack')
    connection.send({ id: '1', type: 'subscribe', payload: { query } })
    return connection
  }

  /** The error payload of subscription "1". */
  const subscriptionError = async (connection: RawConnection) =>
    (await connection.next(messageOf('error', '1'), 'the error of subscription 1')).payload

  const unauthorized = (message: string) => [
    expect.objectContaining({ message, extensions: { code: 'UNAUTHORIZED', requestId: expect.any(String) } }),
  ]

  beforeAll(async () => {
    content = await buildContentTestApp({ ...tokenEnv })
    await content.app.listen({ port: 0, host: '127.0.0.1' })
    url = subscriptionUrl(content.app)
  })

  afterEach(async () => {
    for (const close of opened.splice(0).reverse()) await close()
    // the server has let go of every connection and subscription before the next test counts them
    await soon('the server closed every connection', () => content.app.websocketServer.clients.size === 0)
    await soon('no postCreated listeners', () => localListeners(content.app, topicOf(content)) === 0)
  })

  afterAll(() => content?.close())

  it('when a post is created over HTTP, then graphql-transport-ws subscribers receive it, the email only for its author', async () => {
    const author = await registeredUser(content)
    const reader = await registeredUser(content)
    const asAuthor = collect<PostCreated>(
      graphqlWsClient({ authorization: author.headers.authorization }),
      fullSelection,
    )
    const asReader = collect<PostCreated>(
      graphqlWsClient({ authorization: reader.headers.authorization }),
      fullSelection,
    )
    await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 2 }])

    const before = Date.now()
    const id = await createPost(content, author, 'Live from HTTP')
    await soon('both subscribers', () => asAuthor.values.length === 1 && asReader.values.length === 1)

    const [heard] = asAuthor.values
    expect(heard).toEqual({
      postCreated: {
        id,
        title: 'Live from HTTP',
        content: 'Body',
        createdAt: expect.any(String),
        author: { id: author.id, name: author.name, email: author.email },
      },
    })
    const createdAt = heard!.postCreated.createdAt!
    expect(new Date(createdAt).toISOString()).toBe(createdAt)
    expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(before - 5000)
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(Date.now() + 5000)
    expect(asReader.values).toEqual([
      { postCreated: { ...heard!.postCreated, author: { id: author.id, name: author.name, email: null } } },
    ])
    expect([...asAuthor.errors, ...asReader.errors]).toEqual([])
  })

  it('when the legacy graphql-ws subprotocol starts and stops subscriptions, then data flows until stop, which completes', async () => {
    const author = await registeredUser(content)
    const connection = await connect({ protocol: legacyProtocol })
    connection.send({ type: 'connection_init', payload: { authorization: author.headers.authorization } })
    await connection.next((message) => message.type === 'connection_ack', 'connection_ack')
    connection.send({ id: 'stopped', type: 'start', payload: { query: idSelection } })
    connection.send({ id: 'kept', type: 'start', payload: { query: idSelection } })
    await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 2 }])

    const first = await createPost(content, author, 'First')
    const heardByStopped = await connection.next(messageOf('data', 'stopped'), 'data of "stopped"')
    expect(heardByStopped.payload).toEqual({ data: { postCreated: { id: first, title: 'First' } } })
    expect(postIn(await connection.next(messageOf('data', 'kept'), 'data of "kept"')).id).toBe(first)

    connection.send({ id: 'stopped', type: 'stop' })
    const complete = await connection.next(messageOf('complete', 'stopped'), 'complete of "stopped"')
    expect(complete).toEqual({ type: 'complete', id: 'stopped', payload: null })
    expect(localListeners(content.app, topicOf(content))).toBe(1)

    const second = await createPost(content, author, 'Second')
    await connection.next(
      (message) => messageOf('data', 'kept')(message) && postIn(message).id === second,
      'the second post on "kept"',
    )
    const dataOfStopped = connection.messages
      .filter(messageOf('data', 'stopped'))
      .map((message) => postIn(message).id)
    expect(dataOfStopped).toEqual([first])
    expect(connection.messages.filter((message) => message.type === 'error')).toEqual([])
  })

  it('when a post is created on one instance, then subscribers of another instance with the same prefix hear it and an app with another prefix does not', async () => {
    const author = await registeredUser(content)
    const second = await secondInstance(content)
    opened.push(() => second.app.close())
    await second.app.listen({ port: 0, host: '127.0.0.1' })
    const elsewhere = await buildContentTestApp({ ...tokenEnv })
    opened.push(() => elsewhere.close())
    await elsewhere.app.listen({ port: 0, host: '127.0.0.1' })
    expect(elsewhere.config.CONTENT_PUBSUB_PREFIX).not.toBe(content.config.CONTENT_PUBSUB_PREFIX)

    const credential = { authorization: author.headers.authorization }
    const onSecond = collect<PostCreated>(
      graphqlWsClient(credential, subscriptionUrl(second.app)),
      idSelection,
    )
    const onElsewhere = collect<PostCreated>(
      graphqlWsClient(credential, subscriptionUrl(elsewhere.app)),
      idSelection,
    )
    await untilListening(content.redis, topicOf(content), [
      { app: content.app, listeners: 0 },
      { app: second.app, listeners: 1 },
    ])
    await untilListening(content.redis, topicOf(elsewhere), [{ app: elsewhere.app, listeners: 1 }])

    const first = await createPost(content, author, 'Fan-out one')
    const next = await createPost(content, author, 'Fan-out two')
    await soon('both posts on the second instance', () => onSecond.values.length === 2)

    expect(onSecond.values).toEqual([
      { postCreated: { id: first, title: 'Fan-out one' } },
      { postCreated: { id: next, title: 'Fan-out two' } },
    ])
    expect(onElsewhere.values).toEqual([])
    expect(onElsewhere.errors).toEqual([])
  })

  describe('credentials', () => {
    it('when a subscribe comes without any credential, then its error is UNAUTHORIZED "Missing token"', async () => {
      const connection = await subscribed({})
      expect(await subscriptionError(connection)).toEqual(unauthorized('Missing token'))
      expect(localListeners(content.app, topicOf(content))).toBe(0)
    })

    it('when connection_init carries an invalid token, then the subscribe fails UNAUTHORIZED "Invalid or expired token"', async () => {
      const connection = await subscribed({ payload: { authorization: 'Bearer not.a.token' } })
      expect(await subscriptionError(connection)).toEqual(unauthorized('Invalid or expired token'))
    })

    it('when the token is only in the upgrade request Authorization header, then the subscription delivers posts', async () => {
      const author = await registeredUser(content)
      const connection = await subscribed(
        { headers: author.headers },
        'subscription { postCreated { id author { email } } }',
      )
      await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 1 }])

      const id = await createPost(content, author, 'Header token')
      const data = await connection.next(messageOf('next', '1'), 'the post')
      // the email is the author's own to see: the upgrade's token is the one that counted
      expect(data.payload).toEqual({ data: { postCreated: { id, author: { email: author.email } } } })
    })

    it("when the upgrade carries a valid session cookie from an allowed Origin, then the subscription is the session user's", async () => {
      const author = await registeredUser(content)
      const sessionId = randomBytes(32).toString('base64url')
      const sessionKey = `${authNames.sessionKeyPrefix}${sessionId}`
      // as auth's session store writes it (openSession)
      await content.redis.set(
        sessionKey,
        JSON.stringify({ userId: author.id, role: 'user', createdAt: new Date().toISOString() }),
        'EX',
        60,
      )
      opened.push(() => content.redis.del(sessionKey))
      const connection = await subscribed(
        { headers: { cookie: `${authNames.sessionCookie}=${sessionId}`, origin: allowedOrigin } },
        'subscription { postCreated { id author { email } } }',
      )
      await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 1 }])

      const id = await createPost(content, author, 'Session')
      const data = await connection.next(messageOf('next', '1'), 'the post')
      expect(data.payload).toEqual({ data: { postCreated: { id, author: { email: author.email } } } })
    })

    it('when the session cookie names no session, then the subscribe fails UNAUTHORIZED "Invalid session"', async () => {
      const connection = await subscribed({
        headers: { cookie: `${authNames.sessionCookie}=${randomUUID()}`, origin: allowedOrigin },
      })
      expect(await subscriptionError(connection)).toEqual(unauthorized('Invalid session'))
    })

    it('when a token limited to scopes lacks posts:read (in connection_init or on the upgrade), then the subscribe fails INSUFFICIENT_SCOPE naming it; with it, it listens', async () => {
      const reader = await registeredUser(content)
      const scoped = (scopes: string[]) => `Bearer ${accessToken('user', reader.id, { scopes })}`
      const insufficient = [
        expect.objectContaining({
          message: 'Insufficient scope: this operation needs posts:read',
          extensions: { code: 'INSUFFICIENT_SCOPE', requestId: expect.any(String) },
        }),
      ]
      const inInit = await subscribed({ payload: { authorization: scoped(['orders:read']) } })
      expect(await subscriptionError(inInit)).toEqual(insufficient)
      const onUpgrade = await subscribed({ headers: { authorization: scoped(['posts:write']) } })
      expect(await subscriptionError(onUpgrade)).toEqual(insufficient)

      await subscribed({ payload: { authorization: scoped(['posts:read']) } })
      await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 1 }])
    })
  })

  describe('the upgrade', () => {
    it('when the Origin is not allowed, then the upgrade is refused with 403 and no connection is made', async () => {
      const author = await registeredUser(content)
      const refused = await refusedUpgrade(url, {
        headers: { origin: 'https://evil.example', authorization: author.headers.authorization },
      })
      expect(refused).toMatchObject({ status: 403, opened: false })
      // answered as GraphQL answers every failure of /graphql
      expect(JSON.parse(refused.body)).toEqual({
        data: null,
        errors: [
          { message: 'Origin not allowed', extensions: { code: 'FORBIDDEN', requestId: expect.any(String) } },
        ],
      })
      expect(content.app.websocketServer.clients.size).toBe(0)
    })

    it('when the Origin is allowed, then the connection is acknowledged and delivers posts', async () => {
      const author = await registeredUser(content)
      const connection = await subscribed({
        payload: { authorization: author.headers.authorization },
        headers: { origin: 'http://127.0.0.1:8080' },
      })
      await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 1 }])
      const id = await createPost(content, author, 'Allowed origin')
      expect(postIn(await connection.next(messageOf('next', '1'), 'the post'))).toEqual({
        id,
        title: 'Allowed origin',
      })
    })

    it.each([
      { payload: [1], shown: 'an array' },
      { payload: { authorization: 42 }, shown: '{authorization: 42}' },
    ])(
      'when the connection_init payload is $shown (graphql-transport-ws), then the socket closes with 4403 "Forbidden"',
      async ({ payload }) => {
        const connection = await connect({ protocol: transportProtocol })
        connection.send({ type: 'connection_init', payload })
        const closed = await Promise.race([
          connection.closed,
          new Promise((resolve) => setTimeout(() => resolve('still open'), scaledMs(waitMs))),
        ])
        // the protocol's own refusal: graphql-transport-ws has no connection_error message
        expect(closed).toEqual({ code: 4403, reason: 'Forbidden' })
        expect(connection.messages).toEqual([])
      },
    )

    it.each([
      { payload: [1], shown: 'an array' },
      { payload: { authorization: 42 }, shown: '{authorization: 42}' },
    ])(
      'when the connection_init payload is $shown (legacy graphql-ws), then connection_error "Forbidden" and the socket closes',
      async ({ payload }) => {
        const connection = await connect({ protocol: legacyProtocol })
        connection.send({ type: 'connection_init', payload })
        const closed = await Promise.race([
          connection.closed,
          new Promise((resolve) => setTimeout(() => resolve('still open'), scaledMs(waitMs))),
        ])
        // mercurius closes without a status code: the client sees 1005 (none received)
        expect(closed).toEqual({ code: 1005, reason: '' })
        expect(connection.messages).toEqual([{ type: 'connection_error', payload: { message: 'Forbidden' } }])
      },
    )
  })

  describe('token expiry', () => {
    it('when the token of the connection expires, then the server closes it with 4401 "Invalid or expired token"', async () => {
      const author = await registeredUser(content)
      // long enough for a post to be made and heard before it ends, on a loaded machine too
      const expiresAt = (Math.floor(Date.now() / 1000) + 8) * 1000
      const token = accessToken('user', author.id, { expiresInSeconds: 8 })
      const connection = await subscribed({ payload: { authorization: `Bearer ${token}` } })
      await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 1 }])

      const id = await createPost(content, author, 'Before expiry')
      expect(postIn(await connection.next(messageOf('next', '1'), 'the post')).id).toBe(id)

      const closed = await Promise.race([
        connection.closed,
        new Promise((resolve) => setTimeout(() => resolve('still open'), scaledMs(waitMs))),
      ])
      expect(closed).toEqual({ code: 4401, reason: 'Invalid or expired token' })
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - 100)
      await soon('the subscription to end', () => localListeners(content.app, topicOf(content)) === 0)
    })

    it.each([
      { seconds: -2, shown: 'within the clock tolerance' },
      { seconds: -60, shown: 'a minute ago' },
    ])(
      'when the token expired $shown, then the subscribe fails UNAUTHORIZED "Invalid or expired token"',
      async ({ seconds }) => {
        const token = accessToken('user', randomUUID(), { expiresInSeconds: seconds })
        const connection = await subscribed({ payload: { authorization: `Bearer ${token}` } })
        expect(await subscriptionError(connection)).toEqual(unauthorized('Invalid or expired token'))
        expect(localListeners(content.app, topicOf(content))).toBe(0)
      },
    )
  })

  describe('validation', () => {
    const validationError = (message: string | RegExp) => [
      expect.objectContaining({
        message: typeof message === 'string' ? message : expect.stringMatching(message),
        extensions: { code: 'VALIDATION_ERROR', requestId: expect.any(String) },
      }),
    ]

    it('when the subscription selects an unknown field, then its error is VALIDATION_ERROR', async () => {
      const author = await registeredUser(content)
      const connection = await subscribed(
        { payload: { authorization: author.headers.authorization } },
        'subscription { postCreated { id nope } }',
      )
      expect(await subscriptionError(connection)).toEqual(
        validationError('Cannot query field "nope" on type "Post".'),
      )
    })

    it('when the selection is deeper than 8, then its error is VALIDATION_ERROR', async () => {
      const author = await registeredUser(content)
      // depth 9: postCreated, author, posts, author, posts, author, posts, author, id (limit 1 keeps the cost low)
      const connection = await subscribed(
        { payload: { authorization: author.headers.authorization } },
        'subscription { postCreated { author { posts(limit: 1) { author { posts(limit: 1) { author { posts(limit: 1) { author { id } } } } } } } } }',
      )
      expect(await subscriptionError(connection)).toEqual(
        validationError('The operation is nested 9 deep, deeper than the limit of 8'),
      )
    })

    it('when the subscription costs more than 2000, then its error is VALIDATION_ERROR with its cost', async () => {
      const author = await registeredUser(content)
      const connection = await subscribed(
        { payload: { authorization: author.headers.authorization } },
        'subscription { postCreated { author { posts(limit: 100) { author { posts(limit: 100) { id } } } } } }',
      )
      expect(await subscriptionError(connection)).toEqual(
        validationError('The operation costs 10203, more than the limit of 2000'),
      )
    })

    it('when a query or a mutation is sent as a graphql-transport-ws subscribe, then it is refused as an invalid operation and nothing runs', async () => {
      const author = await registeredUser(content)
      const client = graphqlWsClient({ authorization: author.headers.authorization })
      const query = collect(client, '{ posts { id } }')
      const mutation = collect(
        client,
        `mutation { createPost(title: "Over the socket", content: "x", authorId: "${author.id}") { id } }`,
      )
      await soon('both refusals', () => query.errors.length === 1 && mutation.errors.length === 1)

      // mercurius's own refusal, given its code as it leaves
      const refusal = (message: string) => [
        [{ message, extensions: { code: 'BAD_REQUEST', requestId: expect.any(String) } }],
      ]
      expect(query.errors).toEqual(refusal('Invalid operation: query'))
      expect(mutation.errors).toEqual(refusal('Invalid operation: mutation'))
      expect([...query.values, ...mutation.values]).toEqual([])
      const posts = await graphql<{ user: { posts: { title: string }[] } }>(
        content,
        'query($id: ID!) { user(id: $id) { posts(limit: 100) { title } } }',
        { variables: { id: author.id }, headers: author.headers },
      )
      expect(posts.body.data).toEqual({ user: { posts: [] } })
    })
  })

  it('when one subscriber disconnects, then it hears nothing more and the others still receive posts', async () => {
    const author = await registeredUser(content)
    const credential = { authorization: author.headers.authorization }
    const leavingClient = graphqlWsClient(credential)
    const leaving = collect<PostCreated>(leavingClient, idSelection)
    const staying = collect<PostCreated>(graphqlWsClient(credential), idSelection)
    await untilListening(content.redis, topicOf(content), [{ app: content.app, listeners: 2 }])

    const first = await createPost(content, author, 'Before leaving')
    await soon('the first post', () => leaving.values.length === 1 && staying.values.length === 1)
    await leavingClient.dispose()
    await soon('the server to drop it', () => localListeners(content.app, topicOf(content)) === 1)

    const second = await createPost(content, author, 'After leaving')
    await soon('the second post', () => staying.values.length === 2)
    expect(staying.values.map(({ postCreated }) => postCreated.id)).toEqual([first, second])
    expect(leaving.values.map(({ postCreated }) => postCreated.id)).toEqual([first])
    expect(content.app.websocketServer.clients.size).toBe(1)
  })
})
