// The content service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; posts and users (domain/, data/) served as GraphQL at /graphql (graphql/), the users kept from
// auth's user events (events/) and created in auth through Consul (clients/). Never listens; main.ts and tests
// build it.

import { ErrorCode } from '@meridian/contracts'
import { type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import {
  consulOptionsFromEnv,
  createDiscoveredUpstream,
  createServiceApp,
  exactOrigins,
  registerAuditTrail,
  type ServiceApp,
  type ServiceAppOptions,
  type ServiceClient,
  type ServiceDependencies,
  serviceAppOptions,
} from '@meridian/service-kit'
import { createUserDirectory, type UserDirectory } from './clients/user-directory.ts'
import type { ContentConfig } from './config.ts'
import { createPostsRepository } from './data/posts-repository.ts'
import { createUsersRepository } from './data/users-repository.ts'
import { createPostUseCases, type PostAnnouncer, type PostUseCases } from './domain/posts.ts'
import { createUserUseCases, type UserUseCases } from './domain/users.ts'
import { type ContentEventType, contentConsumers } from './events/consumers.ts'
import { graphqlRoutes } from './graphql/plugin.ts'
import { createPostCreatedChannel } from './graphql/subscriptions.ts'

export type { UserDirectory } from './clients/user-directory.ts'

export const serviceName = 'content'
const description: ServiceAppOptions['description'] =
  'Posts and the GraphQL endpoint (queries, mutations, subscriptions)'

export type ContentDependencies = ServiceDependencies<ContentConfig, Sql> &
  WithServiceEvents<ContentEventType>

/** The app and what main.ts hands to runService, built from the use cases. */
export interface ContentService {
  app: ServiceApp
  /** what the backbone runs: auth's user events, kept as the users projection */
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
  const users = tracedRepository('users', createUsersRepository(sql))
  return {
    users: createUserUseCases({ users, directory }),
    posts: createPostUseCases({
      posts: tracedRepository('posts', createPostsRepository(sql)),
      users,
      sql,
      announcer,
    }),
  }
}

export async function buildApp(dependencies: ContentDependencies): Promise<ContentService> {
  const { config, sql, redis } = dependencies
  const app = await createServiceApp(serviceAppOptions(dependencies, { name: serviceName, description }))

  // auth in Consul: createUser creates users there
  const auth = createDiscoveredUpstream({
    consul: consulOptionsFromEnv(config),
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

  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
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

  // post.created leaves through the outbox; auth's user events come in
  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => contentConsumers(users, options),
  })
  return { app, consumers, clients: auth.clients, users, posts }
}
