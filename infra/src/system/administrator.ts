// An administrator made with auth's own create-admin (services/auth/src/create-admin-command.ts), loaded by path:
// infra depends on no service. Used by the system's start and by the demo seed (the first admin is the one account
// no client can make).
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

type CreateAdmin = (options: {
  databaseUrl: string
  redisUrl: string
  redisTls?: { REDIS_TLS_CA?: string }
  email: string
  name?: string
  password: () => Promise<string>
}) => Promise<{ action: 'created' | 'promoted' | 'unchanged' }>

export interface AdministratorRequest {
  /** auth's database */
  databaseUrl: string
  /** the Redis the services follow credential revocations in */
  redisUrl: string
  /** the CA file of a rediss:// URL (REDIS_TLS_CA) */
  redisCaFile?: string
  email: string
  name: string
  /** used for a new user (or an invited one); an existing user keeps theirs */
  password: string
}

/** Makes (or keeps) the admin; what create-admin did: created, promoted, or unchanged (already an active admin). */
export async function makeAdministrator(
  authDir: string,
  request: AdministratorRequest,
): Promise<'created' | 'promoted' | 'unchanged'> {
  const url = pathToFileURL(join(authDir, 'src', 'create-admin-command.ts')).href
  const { createAdmin } = (await import(url)) as { createAdmin: CreateAdmin }
  const outcome = await createAdmin({
    databaseUrl: request.databaseUrl,
    redisUrl: request.redisUrl,
    ...(request.redisCaFile ? { redisTls: { REDIS_TLS_CA: request.redisCaFile } } : {}),
    email: request.email,
    name: request.name,
    password: async () => request.password,
  })
  return outcome.action
}
