// The content service's environment: its own stores, GraphQL's limits, and the Redis channel prefix subscriptions
// share across instances (auth in Consul, for createUser and API keys, is every service's AUTH_SERVICE_NAME).
import { graphqlLimits, redisPrefixDefaults, redisPrefixPattern } from '@meridian/contracts'
import { exactOrigins, loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const ContentEnv = serviceEnv({
  ...ownStoresEnv({ port: 3008, database: 'content' }),
  CONTENT_PUBSUB_PREFIX: Type.String({
    default: redisPrefixDefaults.contentPubsub,
    pattern: redisPrefixPattern,
    maxLength: 64,
    description:
      "prefix of the Redis pub/sub channels of GraphQL subscriptions: instances that share it hear each other's posts",
  }),
  GRAPHQL_MAX_DEPTH: Type.Integer({
    minimum: 2,
    maximum: 50,
    default: graphqlLimits.maxDepth,
    description: 'deepest selection an operation may have',
  }),
  GRAPHQL_MAX_COST: Type.Integer({
    minimum: 1,
    maximum: 10_000_000,
    default: graphqlLimits.maxCost,
    description: 'largest cost of one operation (a field 1; a list field its selection times its limit)',
  }),
  GRAPHQL_KEEP_ALIVE_MS: Type.Integer({
    minimum: 1000,
    maximum: 600_000,
    default: 30_000,
    description: 'interval of the keep-alive pings on subscription connections',
  }),
  GRAPHQL_ALLOWED_ORIGINS: Type.String({
    default: 'http://localhost:8080,http://127.0.0.1:8080',
    description:
      'comma-separated exact origins a browser may open a subscription connection from; other origins are refused (403)',
  }),
})
export type ContentConfig = Static<typeof ContentEnv>

export function loadContentConfig(env: NodeJS.ProcessEnv = process.env): ContentConfig {
  const config = loadConfig(ContentEnv, env)
  exactOrigins('GRAPHQL_ALLOWED_ORIGINS', config.GRAPHQL_ALLOWED_ORIGINS)
  return config
}
