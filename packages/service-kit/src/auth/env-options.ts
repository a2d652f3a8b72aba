// The plugin options a service's validated config implies, so that no service assembles them by hand.
import { ConfigError, type ServiceEnv } from '../config.ts'
import { consulOptionsFromEnv } from '../registry/consul-env.ts'
import type { AuthPluginOptions } from './auth-plugin.ts'

type AuthEnv = Pick<
  ServiceEnv,
  | 'JWT_ALGORITHM'
  | 'JWT_SECRET'
  | 'AUTH_JWKS_URL'
  | 'JWT_ISSUER'
  | 'JWT_AUDIENCE'
  | 'AUTH_SERVICE_NAME'
  | 'AUTH_DISCOVERY_WAIT_MS'
  | 'CONSUL_HTTP_ADDR'
  | 'CONSUL_HTTP_TOKEN'
  | 'CONSUL_CACERT'
  | 'CONSUL_CLIENT_CERT'
  | 'CONSUL_CLIENT_KEY'
  | 'SERVICE_CREDENTIAL'
>

/**
 * RS256 reads keys from AUTH_JWKS_URL; HS256 needs JWT_SECRET. API keys are introspected at auth, found in Consul as
 * AUTH_SERVICE_NAME (unless `extra.apiKeys` resolves them otherwise): every service that documents apiKeyAuth
 * accepts them. Sessions and the revocations to follow (every service that serves users' data should) are the
 * service's to add.
 */
export function authOptionsFromEnv(
  env: AuthEnv,
  extra: Pick<AuthPluginOptions, 'sessions' | 'apiKeys' | 'revocations'> = {},
): AuthPluginOptions {
  let jwt: AuthPluginOptions['jwt']
  if (env.JWT_ALGORITHM === 'HS256') {
    if (!env.JWT_SECRET) throw new ConfigError(['JWT_SECRET: required when JWT_ALGORITHM is HS256'])
    jwt = { algorithm: 'HS256', secret: env.JWT_SECRET }
  } else {
    jwt = { algorithm: 'RS256', jwksUrl: env.AUTH_JWKS_URL }
  }
  return {
    jwt,
    issuer: env.JWT_ISSUER,
    audience: env.JWT_AUDIENCE,
    apiKeysAtAuth: {
      consul: consulOptionsFromEnv(env),
      serviceName: env.AUTH_SERVICE_NAME,
      discoveryWaitMs: env.AUTH_DISCOVERY_WAIT_MS,
      serviceCredential: env.SERVICE_CREDENTIAL,
    },
    ...extra,
  }
}
