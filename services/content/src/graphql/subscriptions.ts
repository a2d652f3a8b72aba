// postCreated between instances: mercurius's pub/sub over Redis (mqemitter-redis), so that a post created on one
// instance reaches the subscribers of every instance that shares the channel prefix. Live delivery only (Redis
// pub/sub keeps nothing for a subscriber that is away); the durable record of a post is post.created on the broker.
// The message carries the creating request's trace context beside the post, and each delivery to a subscriber is a
// `postCreated deliver` span of that trace.
import type { PostView } from '@meridian/contracts'
import {
  activeTraceContext,
  contextFromStored,
  readTraceContext,
  type StoredTraceContext,
} from '@meridian/events'
import { type Span, SpanKind, trace } from '@opentelemetry/api'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import mqemitterRedis from 'mqemitter-redis'
import type { PostAnnouncer } from '../domain/posts.ts'

/** What postCreated publishes: the subscription's field, as the resolvers of Post read it. */
export interface PostCreatedMessage {
  postCreated: PostView
  /** the creating request's W3C trace context, when traced: a field no client can select, read by deliveredInSpans */
  traceContext?: StoredTraceContext
}

export interface PostCreatedChannel {
  /** the emitter mercurius's subscriptions read */
  emitter: ReturnType<typeof mqemitterRedis>
  /** the topic (a Redis channel) postCreated is published on */
  topic: string
  announcer: PostAnnouncer
  close(): Promise<void>
}

/** Two connections of their own (a subscribing connection can do nothing else), made like `redis`. */
export function createPostCreatedChannel(
  redis: Redis,
  prefix: string,
  log: FastifyBaseLogger,
): PostCreatedChannel {
  const emitter = mqemitterRedis({ subConn: redis.duplicate(), pubConn: redis.duplicate() })
  const topic = `${prefix}post.created`
  return {
    emitter,
    topic,
    announcer: {
      announce(post: PostView) {
        // a field beside postCreated: GraphQL's execution reads only the subscription's field, so clients never see it
        const context = activeTraceContext()
        const payload: PostCreatedMessage =
          context.traceParent === null ? { postCreated: post } : { postCreated: post, traceContext: context }
        emitter.emit({ topic, payload }, (error) => {
          if (error) log.warn({ err: error, postId: post.id }, 'postCreated was not announced')
        })
      },
    },
    close: () => new Promise<void>((resolve) => emitter.close(() => resolve())),
  }
}

/**
 * A subscriber's stream of postCreated messages, each delivered in a `postCreated deliver` span (CONSUMER), a child of
 * the trace context the message carries (a root span when it carries none, or one that is not a bounded string). The
 * span lasts from the message's arrival until the subscriber asks for the next one, which mercurius does once it has
 * executed the subscription's selection and sent the result.
 */
export function deliveredInSpans<T extends object>(
  messages: AsyncIterable<T>,
  topic: string,
): AsyncIterableIterator<T> {
  // mercurius's queue is a Readable: an async iterable, not itself an iterator
  const source = messages[Symbol.asyncIterator]()
  let open: Span | undefined
  const close = () => {
    open?.end()
    open = undefined
  }
  const tracer = trace.getTracer('@meridian/content')
  return {
    async next() {
      close()
      const result = await source.next()
      if (!result.done) {
        const message = result.value as Partial<PostCreatedMessage>
        const parent = contextFromStored(readTraceContext(message.traceContext))
        open = tracer.startSpan('postCreated deliver', { kind: SpanKind.CONSUMER }, parent)
        if (open.isRecording()) {
          open.setAttributes({
            'messaging.system': 'redis',
            'messaging.operation.type': 'process',
            'messaging.destination.name': topic,
            ...(typeof message.postCreated?.id === 'string'
              ? { 'meridian.post.id': message.postCreated.id }
              : {}),
          })
        }
      }
      return result
    },
    async return(value?: unknown) {
      close()
      return source.return ? source.return(value) : { done: true, value: undefined }
    },
    async throw(error?: unknown) {
      close()
      if (source.throw) return source.throw(error)
      throw error
    },
    [Symbol.asyncIterator]() {
      return this
    },
  }
}
