// The OpenAPI document of every service: security schemes, and the error statuses the chassis itself can answer on
// any route, added once here so that each route declares only what is its own (401 of its guard, 404, 409, 412).
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import {
  type ApiScope,
  apiScopes,
  authNames,
  openIdScopes,
  ProblemDetails,
  problemMediaType,
} from '@meridian/contracts'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'

const errorEnvelopeId = 'ErrorEnvelope'
/** `{ $ref }` of the error envelope: what `errorResponses` puts in a route's response schemas. */
const errorEnvelopeRef = `${errorEnvelopeId}#`
const problemDetailsId = 'ProblemDetails'

/** Every scope Meridian's OpenID provider grants: OpenID Connect's own, then the API's catalogue. */
const grantableScopes: Record<string, string> = { ...openIdScopes, ...apiScopes }

/**
 * How each credential the authentication plugin accepts is sent (spec: Authentication). An operation's bearerAuth and
 * apiKeyAuth requirements list the scope it needs (OpenAPI 3.1 allows a list for any scheme); `oauth2` describes
 * the OpenID provider that issues scoped tokens and the catalogue of scopes, and is named by no operation: its tokens
 * are sent as bearerAuth.
 */
export const securitySchemes = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'Authorization: Bearer <access token>: a JWT from POST /login, which carries no scopes and acts with the ' +
      "user's role; or an access token of the OpenID provider for urn:meridian:api (oauth2), which needs the " +
      'scope the operation lists (403 INSUFFICIENT_SCOPE without it)',
  },
  apiKeyAuth: {
    type: 'apiKey',
    in: 'header',
    name: authNames.apiKeyHeader,
    description:
      'an API key (server to server), never accepted in the URL; it needs the scope the operation lists (403 ' +
      "INSUFFICIENT_SCOPE without it) and acts with its owner's role at the moment of use",
  },
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: authNames.sessionCookie,
    description: "the cookie session started by POST /login?mode=session: no scopes, the user's role",
  },
  refreshCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: authNames.refreshCookie,
    description: `the refresh-token cookie (POST /login?refresh=cookie), sent only to ${authNames.refreshCookiePath}`,
  },
  serviceCredential: {
    type: 'apiKey',
    in: 'header',
    name: authNames.serviceCredentialHeader,
    description:
      "the services' shared SERVICE_CREDENTIAL: /internal/ routes, for the other services only (the gateway drops a client's)",
  },
  oauth2: {
    type: 'oauth2',
    description:
      "Meridian's OpenID provider (auth): ask for the resource urn:meridian:api and the scopes your client needs; " +
      'its access tokens are sent as bearerAuth. The scopes below are the whole catalogue.',
    flows: {
      authorizationCode: {
        authorizationUrl: '/authorize',
        tokenUrl: '/token',
        refreshUrl: '/token',
        scopes: grantableScopes,
      },
      clientCredentials: { tokenUrl: '/token', scopes: grantableScopes },
    },
  },
} as const

type SecurityRequirement = Partial<Record<keyof typeof securitySchemes, string[]>>

/** The schemes whose requirement lists the operation's scope: the credentials that can be limited to scopes. */
const scopedSchemes = ['bearerAuth', 'apiKeyAuth'] as const

const anyCredential = (scope: string): SecurityRequirement[] => [
  { bearerAuth: [scope] },
  { apiKeyAuth: [scope] },
  { sessionCookie: [] },
]

/**
 * A route's `schema.security`, which both documents and decides what a credential needs: the scope listed is enforced
 * by the authentication plugin on every route that declares it (see `declaredScopes`). An operation without
 * credentials simply has none.
 */
export const security = {
  /** a bearer token, an API key or the session cookie is required; a scoped one must hold `scope` */
  requires: (scope: ApiScope): SecurityRequirement[] => anyCredential(scope),
  /**
   * anonymous callers are served (the `{}` requirement first); a credential, when sent, is checked (a bad one can be
   * refused), and a scoped one must hold `scope` when the route reads it
   */
  optional: (scope: ApiScope): SecurityRequirement[] => [{}, ...anyCredential(scope)],
  /** only the refresh-token cookie (POST /api/auth/refresh) */
  refreshCookie: [{ refreshCookie: [] }] as SecurityRequirement[],
} as const

/** What a route's `security` says about credentials: the scopes it needs, and whether anonymous callers are served. */
export interface DeclaredScopes {
  scopes: readonly string[]
  /** a `{}` requirement: the route serves anonymous callers */
  optional: boolean
}

const noScopes: DeclaredScopes = { scopes: [], optional: true }
const declared = new WeakMap<object, DeclaredScopes>()

/**
 * The scopes a route's `security` lists for its scoped schemes (the first requirement that lists any; all of them are
 * needed), read once per security array.
 */
export function declaredScopes(security: unknown): DeclaredScopes {
  if (!Array.isArray(security)) return noScopes
  let known = declared.get(security)
  if (known === undefined) {
    const requirements = security.filter(
      (requirement): requirement is Record<string, unknown> =>
        typeof requirement === 'object' && requirement !== null,
    )
    const listed = requirements
      .flatMap((requirement) => scopedSchemes.map((scheme) => requirement[scheme]))
      .find((scopes): scopes is string[] => Array.isArray(scopes) && scopes.length > 0)
    known = {
      scopes: listed ?? [],
      optional: requirements.some((requirement) => Object.keys(requirement).length === 0),
    }
    declared.set(security, known)
  }
  return known
}

/** True when the requirements name a credential that can carry a user's rights (not the refresh cookie alone). */
export function takesCredential(security: unknown): boolean {
  return (
    Array.isArray(security) &&
    security.some(
      (requirement) =>
        typeof requirement === 'object' &&
        requirement !== null &&
        [...scopedSchemes, 'sessionCookie'].some((scheme) => scheme in requirement),
    )
  )
}

/** What each status the chassis can answer means, as the document says it. */
const statusDescriptions: Record<number, string> = {
  400: 'Bad request: malformed JSON (or not UTF-8, or nested too deep), a path that does not decode, or (where a route takes one) a malformed Idempotency-Key header',
  401: 'Missing, invalid or expired credentials',
  403: "Authenticated, but not allowed to do this (FORBIDDEN), or the credential lacks the operation's scope (INSUFFICIENT_SCOPE, the message names it)",
  404: 'Not found',
  409: 'Conflict with the current state (e.g. a taken unique value)',
  412: 'If-Match precondition failed: the resource changed since it was read',
  413: 'Request body larger than 1 MB',
  414: 'A path parameter is longer than the router accepts',
  415: 'Unsupported media type: send application/json',
  422: 'Validation failed: `details` names each field (a query parameter, path parameter, header or body field)',
  429: 'Rate limit exceeded: Retry-After says when to try again',
  500: 'Unexpected failure (generic message, no internals)',
  502: 'The upstream service gave an invalid answer',
  503: 'Service temporarily unavailable (a dependency such as the database is down, or the instance is stopping)',
  504: 'The upstream service did not answer in time',
}

/**
 * An error status as documented: the envelope, or RFC 7807 problem details when the client asks for them. Route
 * schemas name shared schemas by `$id` (`ErrorEnvelope#`, resolved by @fastify/swagger); a finished document (the
 * gateway's merge) names them by their place in it (`#/components/schemas/ErrorEnvelope`).
 */
export function documentedErrorResponse(
  status: number,
  refs: 'route' | 'document' = 'route',
): Record<string, unknown> {
  const ref = (id: string) => (refs === 'route' ? `${id}#` : `#/components/schemas/${id}`)
  return {
    description: statusDescriptions[status] ?? 'Error',
    content: {
      'application/json': { schema: { $ref: ref(errorEnvelopeId) } },
      [problemMediaType]: { schema: { $ref: ref(problemDetailsId) } },
    },
  }
}

/** Methods whose requests Fastify reads a body for: malformed, oversized and non-JSON bodies are refused there. */
const bodyMethods: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

const inputParts = ['body', 'querystring', 'params', 'headers'] as const

/**
 * The error statuses the chassis can answer on this route, whatever its handler does: 400/413/415 where a body is
 * read (and 400 for a path parameter that does not decode), 414 for a path parameter over the router's limit, 422
 * where any input is validated, 401 where a credential is read, 403 where a scope is needed (INSUFFICIENT_SCOPE), 429
 * where the rate limiter counts, and 500 and 503
 * everywhere (an unexpected failure; a dependency down or the instance stopping).
 */
export function chassisStatuses(
  route: { method: string | string[]; url: string; schema?: FastifySchema; config?: unknown },
  { rateLimited }: { rateLimited: boolean },
): number[] {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  const schema = (route.schema ?? {}) as Record<string, unknown>
  const readsBody = methods.some((method) => bodyMethods.has(method))
  const hasPathParameters = /[:*]/.test(route.url)
  const validates = inputParts.some((part) => schema[part] !== undefined)
  const readsCredential = Array.isArray(schema.security) && schema.security.some(isCredential)
  const scoped = declaredScopes(schema.security).scopes.length > 0
  const limited = rateLimited && (route.config as { rateLimit?: unknown } | undefined)?.rateLimit !== false
  return [
    ...(readsBody || hasPathParameters ? [400] : []),
    ...(readsCredential ? [401] : []),
    ...(scoped ? [403] : []),
    ...(readsBody ? [413, 415] : []),
    ...(hasPathParameters ? [414] : []),
    ...(validates ? [422] : []),
    ...(limited ? [429] : []),
    500,
    503,
  ]
}

const isCredential = (requirement: unknown) =>
  typeof requirement === 'object' && requirement !== null && Object.keys(requirement).length > 0

const isErrorEnvelopeRef = (response: unknown) =>
  typeof response === 'object' &&
  response !== null &&
  (response as { $ref?: unknown }).$ref === errorEnvelopeRef &&
  Object.keys(response).length === 1

/**
 * The route's schema as documented: its own responses, the chassis statuses it did not declare, and every error
 * status in both media types. Only the document changes: Fastify's serializers never see these (errors leave through
 * sendError, which writes its own body).
 */
export function documentedSchema(
  route: { method: string | string[]; url: string; schema?: FastifySchema; config?: unknown },
  options: { rateLimited: boolean },
): FastifySchema {
  const schema = route.schema ?? {}
  const own = (schema.response ?? {}) as Record<string, unknown>
  const response: Record<string, unknown> = {}
  for (const [status, declared] of Object.entries(own)) {
    response[status] = isErrorEnvelopeRef(declared) ? documentedErrorResponse(Number(status)) : declared
  }
  // a route that declares no answer at all still has one: what its handler returns
  if (Object.keys(response).length === 0) response['200'] = { description: 'Default Response' }
  for (const status of chassisStatuses(route, options)) {
    response[String(status)] ??= documentedErrorResponse(status)
  }
  return { ...schema, response }
}

export interface OpenApiOptions {
  name: string
  version: string
  description?: string
  /** whether the chassis rate limiter is on (routes may still opt out with config.rateLimit = false) */
  rateLimited: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's JSON body may be left out (POST /logout: a cookie session signs out with none): a request without
     * one is validated as `{}`, and the document says `requestBody.required: false`.
     */
    optionalBody?: boolean
  }
}

/** `/users/:id` as OpenAPI writes it: `/users/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

/**
 * Routes with `config.optionalBody`: a body not sent becomes `{}` before validation (Fastify would refuse it), and
 * their operations are collected so the document can say the body is optional (@fastify/swagger marks every body
 * required).
 */
function followOptionalBodies(app: FastifyInstance): Set<string> {
  const operations = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!route.config?.optionalBody) return
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) operations.add(`${method.toLowerCase()} ${openApiPath(route.url)}`)
    // only a body that was not sent: a JSON `null` is a body of the wrong type, refused as any other
    const emptyBody = async (request: { body: unknown }) => {
      if (request.body === undefined) request.body = {}
    }
    route.preValidation = [emptyBody, ...[route.preValidation ?? []].flat()]
  })
  return operations
}

type OpenApiDocument = { paths?: Record<string, Record<string, { requestBody?: { required?: boolean } }>> }

/** Registers @fastify/swagger (the document at /docs/json) and the UI at /docs. */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  app.addSchema({ ...ProblemDetails, $id: problemDetailsId })
  const optionalBodies = followOptionalBodies(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.name, version: options.version, description: options.description ?? '' },
      tags: [{ name: 'operations', description: 'health and metrics' }],
      components: { securitySchemes: securitySchemes as never },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => ({
      schema: documentedSchema({ ...(route as RouteOptions), schema }, options),
      url,
    }),
    transformObject: (documents) => {
      const document = (
        'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject
      ) as OpenApiDocument
      for (const [path, operations] of Object.entries(document.paths ?? {})) {
        for (const [method, operation] of Object.entries(operations)) {
          if (optionalBodies.has(`${method} ${path}`) && operation.requestBody)
            operation.requestBody.required = false
        }
      }
      return document as never
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } })
}

/** Response schemas for a route's error statuses: the shared envelope, for validation-free documentation. */
export function errorResponses<Status extends number>(
  ...statuses: Status[]
): Record<Status, { $ref: string }> {
  return Object.fromEntries(statuses.map((status) => [status, { $ref: errorEnvelopeRef }])) as Record<
    Status,
    { $ref: string }
  >
}
