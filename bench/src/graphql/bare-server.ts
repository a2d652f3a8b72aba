// bench:graphql's bare server: `fastify()` and `mercurius` with content's own schema, resolvers, loaders, use cases
// and repositories (the same SQL), and postCreated on the same mqemitter-redis channel as the service
// (createPostCreatedChannel) — and nothing else: no chassis, no authentication (the context's principal is always the
// seeded user of BENCH_GRAPHQL_PRINCIPAL), no cost rule, no error formatter, no origin check. Same pool size.
// Started over IPC by main.ts, once per instance; instances of a run share CONTENT_PUBSUB_PREFIX.
import { createContentUseCases, type UserDirectory } from '@meridian/content'
import { contentLoaders, contentResolvers, createPostCreatedChannel } from '@meridian/content/graphql'
import { contentSchema, graphqlPath } from '@meridian/contracts'
import { createDatabase } from '@meridian/db'
import { createRedis, type Principal } from '@meridian/service-kit'
import Fastify from 'fastify'
import mercurius from 'mercurius'
import { serveOverIpc } from '../servers/serve-over-ipc.ts'
import { readServerEnv } from '../servers/server-env.ts'
import type { SeededUser } from './graphql-database.ts'

/** createUser is not part of the benchmark: the bare server has no auth to create users in. */
const noDirectory: UserDirectory = {
  invite: () => Promise.reject(new Error('the bare server creates no users')),
}

await serveOverIpc(async () => {
  const env = readServerEnv()
  const pubsubPrefix = process.env.CONTENT_PUBSUB_PREFIX
  const user = JSON.parse(process.env.BENCH_GRAPHQL_PRINCIPAL ?? 'null') as SeededUser | null
  if (!pubsubPrefix || !user)
    throw new Error(
      'CONTENT_PUBSUB_PREFIX and BENCH_GRAPHQL_PRINCIPAL are not set; graphql/main.ts starts this',
    )
  const sql = createDatabase(env.databaseUrl, { max: env.poolMax, applicationName: 'bench-graphql-bare' })
  const redis = createRedis(env.redisUrl, { connectionName: 'bench-graphql-bare' })
  const app = Fastify()
  const channel = createPostCreatedChannel(redis, pubsubPrefix, app.log)
  const { users, posts } = createContentUseCases({
    sql,
    directory: noDirectory,
    announcer: channel.announcer,
  })

  const principal: Principal = {
    subject: user.id,
    kind: 'user',
    role: 'user',
    roles: [],
    name: user.name,
    email: user.email,
    // a first-party token's principal: no scopes, the role alone (a `scopes` list would limit it)
    method: 'bearer',
  }
  const context = () => ({
    requestId: '',
    principal: async () => principal,
    credentialHeaders: () => ({}),
  })
  await app.register(mercurius, {
    schema: contentSchema,
    resolvers: contentResolvers({ users, posts, postCreatedTopic: channel.topic }),
    loaders: contentLoaders({ users, posts }),
    path: graphqlPath,
    context,
    subscription: { emitter: channel.emitter, context },
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('the bare server is not listening on TCP')
  return {
    port: address.port,
    async close() {
      await app.close()
      await channel.close()
      await redis.quit()
      await sql.end({ timeout: 5 })
    },
  }
})
