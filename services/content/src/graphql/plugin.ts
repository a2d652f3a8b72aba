// GraphQL at /graphql with mercurius: GET and POST, and subscriptions over WebSocket (graphql-transport-ws, and the
// legacy graphql-ws) through @fastify/websocket, registered here once so that other WebSocket routes can share it.
// Limits: depth and cost (limits.ts: refused before anything runs, for subscriptions too); errors in Meridian's terms
// (errors.ts); postCreated fanned out to every instance through Redis pub/sub (subscriptions.ts).
import fastifyWebsocket from '@fastify/websocket'
import { AppError, contentSchema, graphqlPath } from '@meridian/contracts'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { specifiedRules, validate } from 'graphql'
import mercurius from 'mercurius'
import type { PostUseCases } from '../domain/posts.ts'
import type { UserUseCases } from '../domain/users.ts'
import { httpContext, readConnectionInit, subscriptionContext } from './context.ts'
import { formatGraphQLErrors, meridianGraphQLError } from './errors.ts'
import { operationLimitsRule } from './limits.ts'
import { contentLoaders } from './loaders.ts'
import { contentResolvers } from './resolvers.ts'

export interface GraphQLPluginOptions {
  users: UserUseCases
  posts: PostUseCases
  /** the mqemitter that carries postCreated between instances (mqemitter-redis), and its topic */
  emitter: object
  postCreatedTopic: string
  maxDepth: number
  maxCost: number
  /** GraphiQL at /graphiql (development only) */
  graphiql: boolean
  /** the interval of the server's keep-alive pings on subscription connections, ms */
  keepAliveMs: number
  /** the origins a browser may open a subscription connection from (the upgrade's Origin); exact */
  allowedOrigins: readonly string[]
}

async function graphqlPlugin(app: FastifyInstance, options: GraphQLPluginOptions): Promise<void> {
  const limitsRule = operationLimitsRule({ maxDepth: options.maxDepth, maxCost: options.maxCost })

  if (!app.hasDecorator('websocketServer')) {
    await app.register(fastifyWebsocket, { options: { maxPayload: 1024 * 1024 } })
  }
  // a browser sends Origin on every WebSocket upgrade, and would send auth's session cookie with it: an upgrade
  // from a page of another origin is refused before anything is read (cross-site WebSocket hijacking). Added after
  // @fastify/websocket's own hook, which marks an upgrade (request.ws).
  app.addHook('onRequest', async (request) => {
    if (!request.ws) return
    const { origin } = request.headers
    if (origin !== undefined && !options.allowedOrigins.includes(origin.toLowerCase())) {
      throw AppError.forbidden('Origin not allowed')
    }
  })

  await app.register(mercurius, {
    schema: contentSchema,
    resolvers: contentResolvers({ ...options }),
    loaders: contentLoaders(options),
    path: graphqlPath,
    graphiql: options.graphiql,
    validationRules: [limitsRule],
    context: httpContext(app),
    errorFormatter: formatGraphQLErrors as never,
    subscription: {
      emitter: options.emitter,
      context: subscriptionContext(app),
      onConnect: readConnectionInit,
      keepAlive: options.keepAliveMs,
    },
  })

  // mercurius does not validate a subscription's document: the schema's rules and the limits run here
  app.graphql.addHook('preSubscriptionExecution', async (schema, document, context) => {
    const [problem] = validate(schema, document, [...specifiedRules, limitsRule])
    if (problem) {
      throw meridianGraphQLError(
        problem,
        new AppError(400, 'VALIDATION_ERROR', { message: problem.message }),
        context.requestId,
      )
    }
  })
}

export const graphqlRoutes = fp(graphqlPlugin, { name: 'content-graphql', fastify: '5.x' })
