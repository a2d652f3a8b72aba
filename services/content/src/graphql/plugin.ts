// GraphQL at /graphql with mercurius: GET and POST, and subscriptions over WebSocket (graphql-transport-ws, and the
// legacy graphql-ws) through @fastify/websocket, registered here once so that other WebSocket routes can share it.
// Limits: depth and cost (limits.ts: refused before anything runs, for subscriptions too); errors in Meridian's terms
// (errors.ts); postCreated fanned out to every instance through Redis pub/sub (subscriptions.ts).
import fastifyWebsocket from '@fastify/websocket'
import {
  AppError,
  contentSchema,
  GraphQLGetQuery,
  GraphQLPostBody,
  GraphQLResponse,
  graphqlPath,
} from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import type { FastifyInstance, FastifySchema } from 'fastify'
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
  // (a callback hook: it runs on every request of the app, and should not cost a promise)
  app.addHook('onRequest', (request, _reply, done) => {
    const { origin } = request.headers
    const foreign =
      request.ws && origin !== undefined && !options.allowedOrigins.includes(origin.toLowerCase())
    done(foreign ? AppError.forbidden('Origin not allowed') : undefined)
  })

  // mercurius's routes, documented as GraphQL answers them (every status in GraphQL's response shape)
  app.addHook('onRoute', (route) => {
    if (route.url !== graphqlPath || route.method === 'HEAD') return
    route.schema = graphqlRouteSchema(route.method === 'GET' ? 'GET' : 'POST')
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

  // mercurius takes a query that does not parse as GraphQL for a document already parsed, sent as JSON: only GraphQL
  // text is accepted (a JSON value is no GraphQL document, and an AST from a client would skip the parser's limits)
  app.graphql.addHook('preParsing', async (_schema, source) => {
    if (isJson(source)) throw AppError.badRequest('The query must be GraphQL text')
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

/**
 * Whether the text is JSON rather than GraphQL, from its first characters (this runs on every request: no parse, no
 * exception). GraphQL text starts with `{` and a field name, a keyword (query, mutation, subscription, fragment) or a
 * comment; JSON with `{"`, `{}`, `[`, a quote, a digit, a minus, true, false or null.
 */
function isJson(source: string): boolean {
  const text = source.trimStart()
  const first = text.charAt(0)
  if (first === '{') {
    const next = text.slice(1).trimStart().charAt(0)
    return next === '"' || next === '}'
  }
  if (first === '[' || first === '"' || first === '-' || (first >= '0' && first <= '9')) return true
  const word = text.trimEnd()
  return word === 'true' || word === 'false' || word === 'null'
}

/** Every status /graphql answers, each in GraphQL's response shape. */
const graphqlStatuses = [200, 400, 401, 403, 404, 405, 413, 415, 422, 429, 500, 502, 503] as const

function graphqlRouteSchema(method: 'GET' | 'POST'): FastifySchema {
  return {
    tags: ['graphql'],
    summary:
      method === 'GET'
        ? 'Run a GraphQL query (queries only; mutations are POST)'
        : 'Run a GraphQL query or mutation (application/json, or application/graphql with the query as the body)',
    description:
      'The schema is served by introspection; subscriptions are on the same path over WebSocket (graphql-transport-ws ' +
      'or graphql-ws). Each error carries extensions.code and extensions.requestId. The status is 200 when there is ' +
      "data beside the errors, else the error's own; a document GraphQL refuses (syntax, unknown field, depth, cost) " +
      'is 400, a mutation by GET 405. A credential limited to scopes (an API key, an OAuth token) needs posts:read ' +
      'for any operation, and for a mutation its own too: posts:write for createPost, users:write for createUser ' +
      '(403 INSUFFICIENT_SCOPE naming it).',
    security: security.requires('posts:read'),
    ...(method === 'GET' ? { querystring: GraphQLGetQuery } : { body: GraphQLPostBody }),
    response: {
      ...Object.fromEntries(graphqlStatuses.map((status) => [status, GraphQLResponse])),
      // a URL past the server's 16 KB head is refused before any route, in the error envelope
      ...(method === 'GET' ? errorResponses(431) : {}),
    },
  }
}

export const graphqlRoutes = fp(graphqlPlugin, { name: 'content-graphql', fastify: '5.x' })
