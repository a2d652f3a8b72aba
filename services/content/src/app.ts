// The content service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; posts and users (domain/, data/) served as GraphQL at /graphql (graphql/), the users kept from
// auth's user events (events/) and created in auth through Consul (clients/). Never listens; main.ts and tests
// build it.

import { ErrorCode } from '@meridian/contracts'
import { chassisDatabase, type Sql } from '@meridian/db'
import { type AnyServiceConsumer, createEventMetrics } from '@meridian/events'
import {
  authOptionsFromEnv,
  chassisOptions,
  createDiscoveredUpstream,
  createServiceApp,
  exactOrigins,
  type ServiceApp,
  type ServiceClient,
  type ServiceDependencies,
} from '@meridian/service-kit'
import { createUserDirectory, type UserDirectory } from './clients/user-directory.ts'
import type { ContentConfig } from './config.ts'
import { createPostsRepository } from './data/posts-repository.ts'
import { createUsersRepository } from './data/users-repository.ts'
import { createPostUseCases, type PostAnnouncer, type PostUseCases } from './domain/posts.ts'
import { createUserUseCases, type UserUseCases } from './domain/users.ts'
import { type ContentConsumersOptions, contentConsumers } from './events/consumers.ts'
import { graphqlRoutes } from './graphql/plugin.ts'
import { createPostCreatedChannel } from './graphql/subscriptions.ts'

export type { UserDirectory } from './clients/user-directory.ts'

export const serviceName = 'content'

export type ContentDependencies = ServiceDependencies<ContentConfig, Sql> & {
  /** the consumers' group and topics (tests isolate them); the service's own by default */
  consumers?: ContentConsumersOptions
}

/** The app and what main.ts hands to the event backbone and to runService, built from the use cases. */
export interface ContentService {
  app: ServiceApp
  /** for eventsPlugin: auth's user events, kept as the users projection */
  consumers: AnyServiceConsumer[]
  /** for runService: the auth client's connections and its discovery */
  clients: ServiceClient[]
  users: UserUseCases
  posts: PostUseCases
}

/**
 * The use cases over content's repositories, built once: what buildApp serves, and what a bare baseline runs
 * (bench:graphql's bare mercurius).
 */
export function createContentUseCases({
  sql,
  directory,
  announcer,
}: {
  sql: Sql
  directory: UserDirectory
  announcer: PostAnnouncer
}): { users: UserUseCases; posts: PostUseCases } {
  const users = createUsersRepository(sql)
  return {
    users: createUserUseCases({ users, directory }),
    posts: createPostUseCases({ posts: createPostsRepository(sql), users, sql, announcer }),
  }
}

export async function buildApp({
  config,
  sql,
  redis,
  logStream,
  consumers: consumerOptions,
}: ContentDependencies): Promise<ContentService> {
  const app = await createServiceApp({
    ...chassisOptions(config, redis),
    name: serviceName,
    description: 'Posts and the GraphQL endpoint (queries, mutations, subscriptions)',
    database: chassisDatabase(sql),
    // bearer tokens (auth's JWKS), API keys (introspected at auth) and auth's cookie sessions, with auth's
    // revocations followed at once
    authentication: authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }),
    ...(logStream ? { logStream } : {}),
  })
  // outbox lag, published, consumed, retries and dead letters on /metrics
  createEventMetrics(app.metrics.registry)

  // auth in Consul: createUser creates users there
  const auth = createDiscoveredUpstream({
    consul: {
      address: config.CONSUL_HTTP_ADDR,
      ...(config.CONSUL_HTTP_TOKEN ? { token: config.CONSUL_HTTP_TOKEN } : {}),
    },
    name: 'auth',
    serviceName: config.AUTH_SERVICE_NAME,
    logger: app.log,
    discoveryWaitMs: config.AUTH_DISCOVERY_WAIT_MS,
    errorCode: ErrorCode.BAD_GATEWAY,
    // sent only on /internal/ paths (createUser is auth's public POST /api/v1/users)
    serviceCredential: config.SERVICE_CREDENTIAL,
  })
  const postCreated = createPostCreatedChannel(redis, config.CONTENT_PUBSUB_PREFIX, app.log)
  app.addHook('onClose', () => postCreated.close())

  const { users, posts } = createContentUseCases({
    sql,
    directory: createUserDirectory(auth),
    announcer: postCreated.announcer,
  })

  await app.register(graphqlRoutes, {
    users,
    posts,
    emitter: postCreated.emitter,
    postCreatedTopic: postCreated.topic,
    maxDepth: config.GRAPHQL_MAX_DEPTH,
    maxCost: config.GRAPHQL_MAX_COST,
    graphiql: config.NODE_ENV === 'development',
    keepAliveMs: config.GRAPHQL_KEEP_ALIVE_MS,
    allowedOrigins: exactOrigins('GRAPHQL_ALLOWED_ORIGINS', config.GRAPHQL_ALLOWED_ORIGINS),
  })

  return { app, consumers: contentConsumers(users, consumerOptions), clients: auth.clients, users, posts }
}
