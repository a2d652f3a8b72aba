// The auth service's environment.
import { loadConfig, serviceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const AuthEnv = serviceEnv({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3001 }),
  DATABASE_URL: Type.String({
    pattern: '^postgres(ql)?://',
    default: 'postgres://postgres:postgres@127.0.0.1:5432/auth',
  }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6379' }),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
})
export type AuthConfig = Static<typeof AuthEnv>

export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env): AuthConfig => loadConfig(AuthEnv, env)
