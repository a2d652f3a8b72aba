// postCreated in the creating request's trace: the message published over Redis carries its W3C context beside the
// post, and the instance that delivers it to a subscriber does so in a `postCreated deliver` span of that trace. The
// client's payload is unchanged, and a carried context that is not a bounded string is ignored. Tracing is registered
// in memory for this file.
import { randomUUID } from 'node:crypto'
import {
  installTestTracing,
  parentIdOf,
  type ReadableSpan,
  type TestTracing,
  tokenEnv,
} from '@meridian/testkit'
import { context, SpanKind, trace } from '@opentelemetry/api'
import { type Client, createClient } from 'graphql-ws'
import mqemitterRedis from 'mqemitter-redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildContentTestApp, type ContentTestApp, secondInstance } from './support/app.ts'
import { graphql, registeredUser } from './support/graphql.ts'
import { collect, localListeners, soon, subscriptionUrl, untilListening } from './support/subscriptions.ts'

interface PostCreated {
  postCreated: { id: string; title: string; content: string; author: { id: string } }
}

const selection = 'subscription { postCreated { id title content author { id } } }'

let tracing: TestTracing
let content: ContentTestApp
let second: Awaited<ReturnType<typeof secondInstance>>
const clients: Client[] = []

const topicOf = (service: ContentTestApp) => `${service.config.CONTENT_PUBSUB_PREFIX}post.created`

beforeAll(async () => {
  tracing = installTestTracing()
  content = await buildContentTestApp({ ...tokenEnv })
  second = await secondInstance(content)
  await second.app.listen({ port: 0, host: '127.0.0.1' })
})

afterEach(async () => {
  for (const client of clients.splice(0)) await client.dispose()
  // the next test's subscriber is the only one: a message is not taken for heard before it listens
  await soon('no postCreated listeners', () => localListeners(second.app, topicOf(content)) === 0)
})

afterAll(async () => {
  await second?.app.close()
  await content?.close()
  await tracing?.uninstall()
})

/** A subscriber of postCreated on the second instance. */
async function subscriberOnSecond(authorization: string) {
  const client = createClient({
    url: subscriptionUrl(second.app),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization },
  })
  clients.push(client)
  const collected = collect<PostCreated>(client, selection)
  await untilListening(content.redis, topicOf(content), [{ app: second.app, listeners: 1 }])
  return collected
}

const deliverSpans = (postId: string): ReadableSpan[] =>
  tracing
    .spans()
    .filter((span) => span.name === 'postCreated deliver' && span.attributes['meridian.post.id'] === postId)

describe('postCreated in the trace', () => {
  it('when a post is created inside a traced request on one instance, then its delivery on another is a span of that trace, the child of the request’s span, and the client’s payload is unchanged', async () => {
    const author = await registeredUser(content)
    const heard = await subscriberOnSecond(author.headers.authorization)

    const request = trace.getTracer('content-test').startSpan('POST /graphql', { kind: SpanKind.SERVER })
    const answer = await context.with(trace.setSpan(context.active(), request), () =>
      graphql<{ createPost: { id: string } }>(
        content,
        'mutation($author: ID!) { createPost(title: "Traced", content: "Body", authorId: $author) { id } }',
        { variables: { author: author.id }, headers: author.headers },
      ),
    )
    request.end()
    expect(answer.body.errors).toBeUndefined()
    const id = answer.body.data!.createPost.id

    await soon('the subscriber hears the post', () => heard.values.length === 1)
    expect(heard.values).toEqual([
      { postCreated: { id, title: 'Traced', content: 'Body', author: { id: author.id } } },
    ])
    expect(heard.errors).toEqual([])
    // the span ends when the subscriber asks for the next message, after the result was sent
    await soon('the delivery span ends', () => deliverSpans(id).length === 1)
    const [deliver] = deliverSpans(id)
    expect(deliver?.spanContext().traceId).toBe(request.spanContext().traceId)
    expect(parentIdOf(deliver!)).toBe(request.spanContext().spanId)
    expect(deliver?.kind).toBe(SpanKind.CONSUMER)
    expect(deliver?.attributes['messaging.destination.name']).toBe(topicOf(content))
  })

  it('when a postCreated message carries a context that is not a bounded string, then it is delivered unchanged in a root span', async () => {
    const author = await registeredUser(content)
    const heard = await subscriberOnSecond(author.headers.authorization)
    const hostile = mqemitterRedis({ subConn: content.redis.duplicate(), pubConn: content.redis.duplicate() })
    try {
      const contexts: unknown[] = [
        { traceParent: `00-${'a'.repeat(10_000)}` },
        { traceParent: 42, traceState: { nested: true } },
        'not an object',
        { traceParent: 'zz-not-a-traceparent' },
      ]
      const posts = contexts.map((_, i) => ({
        id: randomUUID(),
        title: `Hostile ${i}`,
        content: 'Body',
        authorId: author.id,
        createdAt: new Date().toISOString(),
      }))
      for (const [i, traceContext] of contexts.entries()) {
        await new Promise<void>((resolve, reject) =>
          hostile.emit(
            { topic: topicOf(content), payload: { postCreated: posts[i], traceContext } },
            (error?: Error) => (error ? reject(error) : resolve()),
          ),
        )
      }
      await soon('every post is heard', () => heard.values.length === posts.length)
      expect(heard.values).toEqual(
        posts.map((post) => ({
          postCreated: { id: post.id, title: post.title, content: 'Body', author: { id: author.id } },
        })),
      )
      // every span but the last has ended (the last ends when the next message comes)
      for (const post of posts.slice(0, -1)) {
        const [deliver] = deliverSpans(post.id)
        expect(deliver, post.title).toBeDefined()
        expect(parentIdOf(deliver!), post.title).toBeUndefined()
      }
    } finally {
      await new Promise<void>((resolve) => hostile.close(() => resolve()))
    }
  })
})
