// `pnpm --filter @meridian/bench bench:graphql`: the content service's GraphQL side by side with bare mercurius running
// the same schema, resolvers and SQL, each in processes of their own. Part A: the list query's throughput. Part B:
// postCreated across two instances at a fixed rate of mutations, to subscribers in a process of their own. Prints the
// tables and verdicts, writes results/graphql-latest.json.
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureInfra } from '@meridian/infra'
import { benchLifecycle } from '../bench-lifecycle.ts'
import type { ServerName } from '../ipc.ts'
import { mintToken } from '../realtime/tokens.ts'
import { deleteKeys } from '../redis-keys.ts'
import { machineFigures, toMb } from '../report.ts'
import { type ServerProcess, startProcessOverIpc } from '../server-process.ts'
import { measureDelivery } from './delivery.ts'
import {
  aims,
  type DeliveryResult,
  deliveryVerdict,
  formatDeliveryTable,
  formatDeliveryVerdict,
  formatThroughputTable,
  formatThroughputVerdict,
  keepsThroughput,
  throughputRatio,
} from './figures.ts'
import { loadGraphqlConfig } from './graphql-config.ts'
import { createGraphqlDatabase } from './graphql-database.ts'
import { checkSameAnswer, listQuery, measureThroughput } from './throughput.ts'

const say = (message: string) => process.stderr.write(`[bench:graphql] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/graphql-latest.json', import.meta.url))
const entries: Record<ServerName, string> = {
  chassis: fileURLToPath(new URL('./chassis-server.ts', import.meta.url)),
  bare: fileURLToPath(new URL('./bare-server.ts', import.meta.url)),
}

const { undo, run } = benchLifecycle(
  say,
  'cleaned up: servers and subscribers stopped, Redis keys and database removed',
)

async function main(): Promise<void> {
  const config = loadGraphqlConfig()
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const endpoints = await ensureInfra()
  const database = await createGraphqlDatabase(endpoints.databaseUrl)
  undo.push({ label: `drop database ${database.name}`, run: () => database.drop() })
  say(`database ${database.name} migrated; seeding ${config.seedUsers} users and ${config.seedPosts} posts`)
  const [author] = await database.seed(config.seedUsers, config.seedPosts)
  if (!author) throw new Error('no user was seeded')

  const runId = randomBytes(4).toString('hex')
  const redisKeyPrefix = `bench-graphql-${runId}:`
  undo.push({ label: 'delete Redis keys', run: () => deleteKeys(endpoints.redisUrl, redisKeyPrefix) })
  const tokens = {
    secret: randomBytes(32).toString('base64url'),
    issuer: `http://bench-graphql-${runId}.invalid`,
    audience: 'meridian',
  }
  // the seeded author's token: every operation of both parts is theirs (the bare server ignores it)
  const authorization = `Bearer ${mintToken(tokens, { subject: author.id, name: author.name, expiresInSeconds: 7200 })}`
  const serviceCredential = randomBytes(32).toString('base64url')
  const envOf = (server: ServerName): NodeJS.ProcessEnv => ({
    ...config.inheritedEnv,
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    REDIS_URL: endpoints.redisUrl,
    DATABASE_POOL_MAX: String(config.poolMax),
    BENCH_REDIS_KEY_PREFIX: redisKeyPrefix,
    CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
    ...(endpoints.consulToken ? { CONSUL_HTTP_TOKEN: endpoints.consulToken } : {}),
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    JWT_ALGORITHM: 'HS256',
    JWT_SECRET: tokens.secret,
    JWT_ISSUER: tokens.issuer,
    JWT_AUDIENCE: tokens.audience,
    // production refuses the public development credential; this is the run's own
    SERVICE_CREDENTIAL: serviceCredential,
    // each kind's instances hear each other, never the other kind's
    CONTENT_PUBSUB_PREFIX: `bench-graphql-${runId}-${server}:`,
    BENCH_GRAPHQL_PRINCIPAL: JSON.stringify(author),
  })
  const start = async (server: ServerName, instance: number) => {
    const started = await startProcessOverIpc(`${server} ${instance}`, entries[server], envOf(server))
    undo.push({ label: `stop ${started.name} (pid ${started.pid})`, run: () => started.stop() })
    return started
  }

  const first = { chassis: await start('chassis', 1), bare: await start('bare', 1) }
  const idleRssMb = {
    chassis: toMb((await first.chassis.snapshot()).rss),
    bare: toMb((await first.bare.snapshot()).rss),
  }
  say(
    `servers up: chassis pid ${first.chassis.pid} (${idleRssMb.chassis} MB), bare pid ${first.bare.pid} (${idleRssMb.bare} MB)`,
  )

  const answerCheck = await checkSameAnswer(first, authorization)
  for (const problem of answerCheck.problems) say(`WARNING: the servers do not do the same work: ${problem}`)
  say(
    `A. ${listQuery}: warm-up ${config.warmupSeconds} s each, then ${config.measureSeconds} s each in halves ` +
      `(chassis, bare, bare, chassis), ${config.connections} connections`,
  )
  const throughput = await measureThroughput(first, authorization, config)
  const ratio = throughputRatio(throughput[0]!, throughput[1]!)

  const delivery: DeliveryResult[] = []
  for (const server of ['chassis', 'bare'] as const) {
    say(`B. postCreated across two ${server} instances`)
    const second: ServerProcess<string> = await start(server, 2)
    delivery.push(
      await measureDelivery(
        server,
        [first[server], second],
        { ...config, authorization, authorId: author.id },
        {
          onSubscriberProcess: (subscribers) =>
            undo.push({ label: `stop subscribers pid ${subscribers.pid}`, run: () => subscribers.stop() }),
          say,
        },
      ),
    )
    await second.stop()
    await database.removeCreatedPosts()
  }

  const [chassisDelivery, bareDelivery] = delivery
  process.stdout.write(
    `\n${formatThroughputTable(throughput)}\n\n${formatThroughputVerdict(ratio)}\n\n` +
      `${formatDeliveryTable(delivery)}\n\n${formatDeliveryVerdict(chassisDelivery!, bareDelivery)}\n` +
      `machine load average before the run: ${loadBefore.toFixed(2)}\n`,
  )

  await mkdir(dirname(resultsFile), { recursive: true })
  const report = {
    measuredAt: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: machineFigures(loadBefore, loadavg()[0]),
    settings: { ...config, inheritedEnv: undefined },
    aims,
    idleRssMb,
    throughput: {
      query: listQuery,
      answerCheck,
      results: throughput,
      ratio,
      keepsThroughput: keepsThroughput(ratio),
    },
    delivery: { results: delivery, verdict: deliveryVerdict(chassisDelivery!) },
  }
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`)
  say(`wrote ${resultsFile}`)
}

await run(main)
