// A service's main from its declaration: configuration, the database pool (migrated) and Redis, the app, listening
// and Consul, and on a signal a drain that closes the app (its event backbone, clocks) before what it was given.
import { createDatabase, type MigrationLogger, type Sql } from '@meridian/db'
import type { Redis } from 'ioredis'
import { pino } from 'pino'
import type { ServiceApp } from './app.ts'
import { type EngineVariables, plaintextEngines } from './engine-transport.ts'
import { loggerOptions } from './logging.ts'
import { createRedis, type RedisSentinelVariables, type RedisTlsFiles } from './redis.ts'
import { runMain, runService, type ServiceClient, type ServiceRunConfig } from './run-service.ts'
import { activeTracing } from './tracing/active-tracing.ts'

type MainConfig = ServiceRunConfig &
  RedisTlsFiles &
  RedisSentinelVariables & { REDIS_URL: string; LOG_LEVEL: string }
type DatabaseConfig = {
  DATABASE_URL: string
  DATABASE_POOL_MAX: number
  DATABASE_IDLE_TRANSACTION_TIMEOUT_MS: number
}

/** What buildApp hands back: the app alone, or with the clients it opened (closed after it, before the stores). */
export type BuiltService = ServiceApp | { app: ServiceApp; clients?: readonly ServiceClient[] }

/**
 * What the process gives buildApp. `events: true` asks the app for its event backbone (the relay of its outbox and
 * its consumers); tests leave it out, or give their own group and topics.
 */
export interface MainDependencies<Config> {
  config: Config
  redis: Redis
  events: true
}

interface Declaration<Config> {
  /** the service's name: its logs, its pool's and Redis connection's names */
  name: string
  /** config.ts's loader: a bad variable stops the process with every problem named */
  loadConfig(): Config
}

/** A service with a database of its own: migrated before the app is built, so its backbone finds its tables. */
export interface DatabaseServiceDeclaration<Config extends MainConfig & DatabaseConfig>
  extends Declaration<Config> {
  /** the service's one migrate function (also `pnpm migrate`'s and the tests') */
  migrate(sql: Sql, logger: MigrationLogger): Promise<unknown>
  buildApp(dependencies: MainDependencies<Config> & { sql: Sql }): Promise<BuiltService>
}

/** A service without a database (the gateway): Redis only. */
export interface StatelessServiceDeclaration<Config extends MainConfig> extends Declaration<Config> {
  database: false
  buildApp(dependencies: MainDependencies<Config>): Promise<BuiltService>
}

function isStateless<Config extends MainConfig>(
  declaration: DatabaseServiceDeclaration<Config & DatabaseConfig> | StatelessServiceDeclaration<Config>,
): declaration is StatelessServiceDeclaration<Config> {
  return 'database' in declaration && declaration.database === false
}

/**
 * A production service allowed plaintext engines (ENGINES_PLAINTEXT_ALLOWED) says at start which it reaches so, and
 * why that is not refused: an operator reading the log sees what the configuration accepted.
 */
function warnOfPlaintextEngines(name: string, config: MainConfig): void {
  const settings = config as MainConfig & EngineVariables & { NODE_ENV?: string }
  if (settings.NODE_ENV !== 'production') return
  const engines = plaintextEngines(settings)
  if (engines.length === 0) return
  pino(loggerOptions(name, config.LOG_LEVEL)).warn(
    { plaintextEngines: engines },
    'engines reached in plaintext or without credentials, allowed by ENGINES_PLAINTEXT_ALLOWED=true',
  )
}

/**
 * A service's main.ts in one call. The stores close last (the app's consumers and relay use them until it has
 * closed), the clients buildApp returned just before them, in their order.
 *
 *     serviceMain({ name: serviceName, loadConfig: loadOrderConfig, migrate: migrateOrderDatabase, buildApp })
 */
export function serviceMain<Config extends MainConfig & DatabaseConfig>(
  declaration: DatabaseServiceDeclaration<Config>,
): void
export function serviceMain<Config extends MainConfig>(declaration: StatelessServiceDeclaration<Config>): void
export function serviceMain<Config extends MainConfig>(
  declaration: DatabaseServiceDeclaration<Config & DatabaseConfig> | StatelessServiceDeclaration<Config>,
): void {
  const { name } = declaration
  runMain(name, async () => {
    const config = declaration.loadConfig()
    warnOfPlaintextEngines(name, config)
    // tracing was started by the preload, before this module loaded: it learns now whose spans it sends
    activeTracing()?.identify({ name, version: config.SERVICE_VERSION })
    const redis = createRedis(config.REDIS_URL, { connectionName: name, tls: config, sentinel: config })
    let sql: Sql | undefined
    let built: BuiltService
    try {
      if (isStateless(declaration)) {
        built = await declaration.buildApp({ config, redis, events: true })
      } else {
        const withDatabase = config as Config & DatabaseConfig
        sql = createDatabase(withDatabase.DATABASE_URL, {
          max: withDatabase.DATABASE_POOL_MAX,
          idleInTransactionTimeoutMs: withDatabase.DATABASE_IDLE_TRANSACTION_TIMEOUT_MS,
          applicationName: name,
          urlSource: 'DATABASE_URL',
        })
        // the app does not exist yet: its backbone starts while it is built, on migrated tables
        await declaration.migrate(sql, pino(loggerOptions(name, config.LOG_LEVEL)))
        built = await declaration.buildApp({ config: withDatabase, sql, redis, events: true })
      }
    } catch (error) {
      // let go of the stores, so that a failed start ends the process now rather than when runMain forces it
      redis.disconnect()
      await sql?.end({ timeout: 1 })
      throw error
    }
    const { app, clients = [] } = 'listen' in built ? { app: built } : built
    // every module the app needs is loaded, and those tracing instruments are patched: its require hook comes off
    activeTracing()?.loaded()
    await runService({ app, config, clients: [...clients, ...(sql ? [sql] : []), redis] })
  })
}
