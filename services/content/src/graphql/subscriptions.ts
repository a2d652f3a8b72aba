// postCreated between instances: mercurius's pub/sub over Redis (mqemitter-redis), so that a post created on one
// instance reaches the subscribers of every instance that shares the channel prefix. Live delivery only (Redis
// pub/sub keeps nothing for a subscriber that is away); the durable record of a post is post.created on the broker.
import type { PostView } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import mqemitterRedis from 'mqemitter-redis'
import type { PostAnnouncer } from '../domain/posts.ts'
import type { PostCreatedMessage } from './resolvers.ts'

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
        const payload: PostCreatedMessage = { postCreated: post }
        emitter.emit({ topic, payload }, (error) => {
          if (error) log.warn({ err: error, postId: post.id }, 'postCreated was not announced')
        })
      },
    },
    close: () => new Promise<void>((resolve) => emitter.close(() => resolve())),
  }
}
