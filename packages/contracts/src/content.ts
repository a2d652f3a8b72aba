// The content service's GraphQL API (spec: GraphQL, Post): the schema every client reads, the arguments' rules as
// TypeBox schemas (checked by the resolvers, which answer VALIDATION_ERROR with details), and the limits.
import { type Static, Type } from 'typebox'
import { ErrorDetail } from './errors.ts'
import { VisibleText } from './schema-kinds.ts'

/** Where GraphQL is served (docs/explanation/architecture.md, "The processes"): HTTP GET and POST, and WebSocket (graphql-transport-ws, graphql-ws). */
export const graphqlPath = '/graphql'

export const graphqlLimits = Object.freeze({
  /** posts a list returns when `limit` is not given */
  defaultPostsLimit: 20,
  /** the largest `limit` of a list */
  maxPostsLimit: 100,
  titleMaxLength: 200,
  contentMaxLength: 50_000,
  /** deepest selection (the introspection query GraphiQL sends is 7 deep) */
  maxDepth: 8,
  /**
   * the largest cost of one operation: each field costs 1, and a list field's selection costs as many times as it
   * may return items (its `limit`; the largest limit when the limit is a variable)
   */
  maxCost: 2000,
  /** GraphQL operations a client may send at once in a batch (an array body) */
  maxBatch: 10,
  /**
   * the longest GraphQL text a request carries (the document; GET's variables and extensions, JSON as text): the JSON
   * body's limit. A mutation may carry a post's 50,000 characters inline, escaped by its client (`\uXXXX` is 6
   * characters for one, 12 beyond the BMP), so no shorter bound passes every document sent in good faith; what a
   * document may ask is bounded by maxDepth and maxCost
   */
  maxDocumentLength: 1_000_000,
  /**
   * the longest text of each GET parameter (the document, variables, extensions): a URL travels in the request's
   * head, which the server takes up to 16 KB of (past it, 431); a longer document goes by POST
   */
  maxUrlTextLength: 4096,
  /** an operation's name: a GraphQL name, as long as any other name */
  maxOperationNameLength: 200,
  /** the variables one request may bind: this schema's operations take at most three arguments each */
  maxVariables: 100,
  /** the keys of a request's `extensions` (a persisted query's hash, a client's tracing) */
  maxExtensions: 20,
})

/**
 * The schema (SDL). Beyond the spec's shape, all additive and documented here: lists take `limit` (default 20, at
 * most 100) and `after` (the id of the last post of the previous page: keyset pagination, newest first);
 * `Post.createdAt`; `User.email` is visible to the user and to admins only (null for anyone else).
 */
export const contentSchema = /* GraphQL */ `
  """
  A Meridian user as the content service knows them: kept from auth's user events.
  """
  type User {
    id: ID!
    name: String!
    """
    Visible to the user themself and to admins; null for anyone else.
    """
    email: String
    """
    The user's posts, newest first: at most \`limit\` (1 to 100, default 20), older than the post \`after\`.
    """
    posts(limit: Int = 20, after: ID): [Post!]!
  }

  type Post {
    id: ID!
    title: String!
    content: String!
    author: User!
    """
    When it was created, ISO 8601.
    """
    createdAt: String!
  }

  type Query {
    """
    A user by id; null when there is none.
    """
    user(id: ID!): User
    """
    Posts, newest first: at most \`limit\` (1 to 100, default 20), older than the post \`after\` (the last id of the
    previous page).
    """
    posts(limit: Int = 20, after: ID): [Post!]!
  }

  type Mutation {
    """
    Creates a user in auth (admins only). The user has no password: they are \`invited\` and cannot sign in until an
    admin sets one (PUT /api/v1/users/{id}/password).
    """
    createUser(name: String!, email: String!): User!
    """
    Creates a post of \`authorId\`: yourself, or anyone when you are an admin. Subscribers of postCreated hear it.
    """
    createPost(title: String!, content: String!, authorId: ID!): Post!
  }

  type Subscription {
    """
    Every post created from now on, on any instance of the service.
    """
    postCreated: Post!
  }
`

const Id = Type.String({ format: 'uuid', maxLength: 36 })

/** Query.posts and User.posts. */
export const PostsArgs = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: graphqlLimits.maxPostsLimit }),
  after: Type.Optional(Id),
})
export type PostsArgs = Static<typeof PostsArgs>

/** Query.user. */
export const UserArgs = Type.Object({ id: Id })
export type UserArgs = Static<typeof UserArgs>

/** Mutation.createPost: stored trimmed. */
export const CreatePostArgs = Type.Object({
  title: VisibleText({ minLength: 1, maxLength: graphqlLimits.titleMaxLength }),
  content: VisibleText({ minLength: 1, maxLength: graphqlLimits.contentMaxLength }),
  authorId: Id,
})
export type CreatePostArgs = Static<typeof CreatePostArgs>

/** Mutation.createUser: as auth's CreateUserBody checks them. */
export const CreateUserArgs = Type.Object({
  name: VisibleText({ minLength: 1, maxLength: 200 }),
  email: Type.String({ format: 'email', maxLength: 254 }),
})
export type CreateUserArgs = Static<typeof CreateUserArgs>

/** `extensions` of every GraphQL error Meridian answers. */
export const GraphQLErrorExtensions = Type.Object(
  {
    code: Type.String({
      description: "the spec's error code: UNAUTHORIZED, FORBIDDEN, NOT_FOUND, VALIDATION_ERROR …",
    }),
    requestId: Type.String(),
    details: Type.Optional(Type.Array(ErrorDetail)),
    retryAfter: Type.Optional(
      Type.Integer({ minimum: 0, description: 'seconds (RATE_LIMITED, SERVICE_UNAVAILABLE)' }),
    ),
  },
  { additionalProperties: true },
)

/** One error of a GraphQL response. */
export const GraphQLResponseError = Type.Object(
  {
    message: Type.String(),
    locations: Type.Optional(Type.Array(Type.Object({ line: Type.Integer(), column: Type.Integer() }))),
    path: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),
    extensions: GraphQLErrorExtensions,
  },
  { additionalProperties: true },
)

/**
 * What /graphql answers over HTTP, whatever the status: `data` (null when the operation did not run, or failed where
 * no null is allowed) and, when something failed, `errors`.
 */
export const GraphQLResponse = Type.Object(
  {
    // any JSON (its shape is the operation's): serialized as it is, no per-field work on every answer
    data: Type.Unknown({ description: "the operation's result (an object), or null" }),
    errors: Type.Optional(Type.Array(GraphQLResponseError, { minItems: 1 })),
  },
  { additionalProperties: true, description: 'a GraphQL response' },
)

const GraphQLRequestFields = {
  query: Type.String({
    minLength: 1,
    maxLength: graphqlLimits.maxDocumentLength,
    description: 'the operation, in GraphQL',
  }),
  operationName: Type.Optional(
    Type.Union([Type.String({ maxLength: graphqlLimits.maxOperationNameLength }), Type.Null()], {
      description: 'which operation to run',
    }),
  ),
}

/** GET /graphql (queries only): each parameter as long as a URL may carry it (a longer document: POST). */
export const GraphQLGetQuery = Type.Object({
  ...GraphQLRequestFields,
  query: Type.String({
    minLength: 1,
    maxLength: graphqlLimits.maxUrlTextLength,
    description: 'the operation, in GraphQL (a longer one by POST)',
  }),
  variables: Type.Optional(
    Type.String({
      maxLength: graphqlLimits.maxUrlTextLength,
      description: 'the variables, a JSON object as text',
    }),
  ),
  extensions: Type.Optional(
    Type.String({ maxLength: graphqlLimits.maxUrlTextLength, description: 'a JSON object as text' }),
  ),
})

/** POST /graphql with application/json. */
export const GraphQLPostBody = Type.Object({
  ...GraphQLRequestFields,
  variables: Type.Optional(
    Type.Union([
      Type.Record(Type.String(), Type.Unknown(), { maxProperties: graphqlLimits.maxVariables }),
      Type.Null(),
    ]),
  ),
  extensions: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { maxProperties: graphqlLimits.maxExtensions }),
  ),
})

/** A post as GraphQL answers it, and as postCreated carries it between instances. */
export interface PostView {
  id: string
  title: string
  content: string
  authorId: string
  createdAt: string
}

/** A user as GraphQL answers it (email null where the caller may not see it). */
export interface UserView {
  id: string
  name: string
  email: string | null
}
