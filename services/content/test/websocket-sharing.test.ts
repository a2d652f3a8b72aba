// GraphQL beside other WebSocket routes: the GraphQL plugin uses the app's @fastify/websocket when there is one (and
// registers it when there is none), so another upgrade route of the same server keeps working beside subscriptions.
// And GraphiQL, which only development serves.
import fastifyWebsocket from '@fastify/websocket'
import { authOptionsFromEnv, chassisOptions, createServiceApp, type ServiceApp } from '@meridian/service-kit'
import { captureLogs, tokenEnv } from '@meridian/testkit'
import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createContentUseCases, type UserDirectory } from '../src/app.ts'
import { graphqlRoutes } from '../src/graphql/plugin.ts'
import { createPostCreatedChannel, type PostCreatedChannel } from '../src/graphql/subscriptions.ts'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'
import { graphql, registeredUser } from './support/graphql.ts'
import { collect, soon, subscriptionUrl, untilListening } from './support/subscriptions.ts'

const noDirectory: UserDirectory = { invite: () => Promise.reject(new Error('no users are created here')) }

describe('content: GraphQL beside another WebSocket route', () => {
  let content: ContentTestApp
  let app: ServiceApp
  let channel: PostCreatedChannel

  beforeAll(async () => {
    content = await buildContentTestApp({ ...tokenEnv })
    const { config, sql, redis } = content
    app = await createServiceApp({
      ...chassisOptions(config, redis),
      name: 'content-sharing-test',
      authentication: authOptionsFromEnv(config, { sessions: { redis } }),
      logStream: captureLogs().stream,
    })
    // an app that has its own WebSocket route, registered before GraphQL
    await app.register(fastifyWebsocket)
    app.get('/echo', { websocket: true }, (socket) => {
      socket.on('message', (message: Buffer) => socket.send(`echo: ${message.toString()}`))
    })
    channel = createPostCreatedChannel(redis, config.CONTENT_PUBSUB_PREFIX, app.log)
    const { users, posts } = createContentUseCases({
      sql,
      directory: noDirectory,
      announcer: channel.announcer,
    })
    await app.register(graphqlRoutes, {
      users,
      posts,
      emitter: channel.emitter,
      postCreatedTopic: channel.topic,
      maxDepth: 8,
      maxCost: 2000,
      graphiql: false,
      keepAliveMs: 30_000,
      allowedOrigins: [],
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
  })

  afterAll(async () => {
    await app?.close()
    await channel?.close()
    await content?.close()
  })

  it('when the app has its own WebSocket route, then it answers, and postCreated is delivered beside it', async () => {
    const echo = new WebSocket(subscriptionUrl(app).replace('/graphql', '/echo'))
    const echoed = new Promise<string>((resolve) => echo.once('message', (data) => resolve(data.toString())))
    echo.once('open', () => echo.send('hello'))
    expect(await echoed).toBe('echo: hello')
    echo.close()

    const author = await registeredUser(content)
    const client = createClient({
      url: subscriptionUrl(app),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: author.headers.authorization },
    })
    try {
      const heard = collect<{ postCreated: { title: string } }>(
        client,
        'subscription { postCreated { title } }',
      )
      await untilListening(content.redis, channel.topic, [{ app, listeners: 1 }])
      const created = await graphql(
        { app },
        'mutation($a: ID!) { createPost(title: "Side by side", content: "x", authorId: $a) { id } }',
        {
          variables: { a: author.id },
          headers: author.headers,
        },
      )
      expect(created.body.errors).toBeUndefined()
      await soon('the post', () => heard.values.length === 1)
      expect(heard.values).toEqual([{ postCreated: { title: 'Side by side' } }])
    } finally {
      await client.dispose()
    }
  })
})

describe('content: GraphiQL', () => {
  it('when NODE_ENV is development, then /graphiql is served; in test, or unset (production), it does not exist', async () => {
    const development = await buildContentTestApp({ ...tokenEnv, NODE_ENV: 'development' })
    const test = await buildContentTestApp({ ...tokenEnv })
    // empty is unset: the configuration's default, production (its credential and database are not the public ones;
    // the test's engines are the development ones, plaintext on this machine's loopback, so allowed)
    const unset = await buildContentTestApp({ ...tokenEnv, NODE_ENV: '', ENGINES_PLAINTEXT_ALLOWED: 'true' })
    try {
      const served = await development.app.inject({ method: 'GET', url: '/graphiql' })
      expect(served.statusCode).toBe(200)
      expect(served.headers['content-type']).toMatch(/text\/html/)
      expect(unset.config.NODE_ENV).toBe('production')
      for (const [label, built] of [
        ['test', test],
        ['production', unset],
      ] as const) {
        const absent = await built.app.inject({ method: 'GET', url: '/graphiql' })
        expect(absent.statusCode, label).toBe(404)
        expect(absent.headers['content-type'], label).not.toMatch(/text\/html/)
      }
    } finally {
      await development.close()
      await test.close()
      await unset.close()
    }
  })
})
