// The create-admin command (scripts/create-admin): arguments, password, database; apart from its entry point so
// tests call it. The password comes from MERIDIAN_ADMIN_PASSWORD or a prompt, never from an argument (ps, history).
import { createInterface } from 'node:readline/promises'
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import { isAppError } from '@meridian/contracts'
import { createDatabase, isDatabaseUnavailable } from '@meridian/db'
import {
  ConfigError,
  createRedis,
  loadConfig,
  RedisSentinelEnv,
  type RedisSentinelVariables,
  RedisTlsEnv,
  type RedisTlsFiles,
} from '@meridian/service-kit'
import { Type } from 'typebox'
import { AuthEnv } from './config.ts'
import { createCredentialRevocationsRepository } from './data/credential-revocations-repository.ts'
import { createCredentialRevocationsStore } from './data/credential-revocations-store.ts'
import { createProviderAccounts } from './data/oidc-payloads.ts'
import { createRefreshTokensRepository } from './data/refresh-tokens-repository.ts'
import { createUserPasswordsRepository } from './data/user-passwords-repository.ts'
import { createUsersRepository } from './data/users-repository.ts'
import {
  type AdminOutcome,
  type AdminRequest,
  createAdminUseCases,
  type PasswordSource,
} from './domain/admins.ts'
import { createCredentialRevoker, revocationKeepForMs } from './domain/credential-revocation.ts'
import { createUserUseCases, normaliseEmail } from './domain/users.ts'
import { migrateAuthDatabase } from './migrations.ts'

export const createAdminUsage = `usage: scripts/create-admin --email <email> [--name <name>] [--reset-password]

Makes an administrator in auth's database (DATABASE_URL): creates an active admin when no user has the email
(with its user.registered event), else makes that user an active admin (with a user.profile_changed event).
Migrates the database first.

  --email <email>     the administrator's email (required)
  --name <name>       their name (required for a new user; an existing user keeps theirs)
  --reset-password    also give an existing user a new password (otherwise theirs is kept; an invited
                      user, who has none, is always asked for one)

The password is read from MERIDIAN_ADMIN_PASSWORD or, in a terminal, prompted without echo; never from an
argument. At least 8 characters, as for registration.`

/** The command's environment: only what it needs, read once (config.ts' rules for DATABASE_URL). */
const CreateAdminEnv = Type.Object({
  DATABASE_URL: AuthEnv.properties.DATABASE_URL,
  // where the running services learn that a promoted or re-passworded user's credentials are revoked
  REDIS_URL: AuthEnv.properties.REDIS_URL,
  // auth's own Redis user over TLS, as the service connects (docs/reference/configuration.md)
  ...RedisTlsEnv.properties,
  // and through its sentinels, when the service finds its primary so (REDIS_SENTINELS, REDIS_NAME)
  ...RedisSentinelEnv.properties,
  ACCESS_TOKEN_TTL_SECONDS: AuthEnv.properties.ACCESS_TOKEN_TTL_SECONDS,
  SESSION_TTL_SECONDS: AuthEnv.properties.SESSION_TTL_SECONDS,
  MERIDIAN_ADMIN_PASSWORD: Type.Optional(Type.String()),
})

/** A problem the operator can fix, reported as one message and an exit code (2: the command line itself). */
class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message)
    this.name = 'CommandError'
  }
}

export type CreateAdminArguments = { help: true } | ({ help: false } & AdminRequest)

export function parseCreateAdminArguments(argv: string[]): CreateAdminArguments {
  if (argv.some((arg) => arg === '--password' || arg.startsWith('--password='))) {
    throw new CommandError(
      'the password is never taken from the command line (it would show in ps and the shell history): ' +
        'set MERIDIAN_ADMIN_PASSWORD, or run in a terminal to be asked for it',
      2,
    )
  }
  let values: { email?: string; name?: string; 'reset-password'?: boolean; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        'reset-password': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    throw new CommandError(error instanceof Error ? error.message : String(error), 2)
  }
  if (values.help) return { help: true }
  if (values.email === undefined) throw new CommandError('--email is required', 2)
  return {
    help: false,
    email: values.email,
    name: values.name,
    resetPassword: values['reset-password'] ?? false,
  }
}

export interface CreateAdminOptions extends AdminRequest {
  /** auth's database */
  databaseUrl: string
  /** the Redis the services follow revocations in */
  redisUrl: string
  /** its REDIS_TLS_* (rediss://) */
  redisTls?: RedisTlsFiles
  /** its REDIS_SENTINELS and REDIS_NAME, when Redis is found through sentinels */
  redisSentinel?: RedisSentinelVariables
  /** how long a revocation is kept, ms (auth's: the longest access-token or session lifetime); default 8 h 5 s */
  revocationKeepForMs?: number
  password: PasswordSource
  /** progress for the operator (migrations applied) */
  log?: (line: string) => void
}

/** Migrates auth's database as main.ts does, makes the admin, and closes the pool whatever happened. */
export async function createAdmin(options: CreateAdminOptions): Promise<AdminOutcome> {
  // first: a TLS file that cannot be read stops the command before anything is opened
  const redis = createRedis(options.redisUrl, {
    connectionName: 'auth-create-admin',
    ...(options.redisTls ? { tls: options.redisTls } : {}),
    ...(options.redisSentinel ? { sentinel: options.redisSentinel } : {}),
  })
  const sql = createDatabase(options.databaseUrl, {
    max: 1,
    applicationName: 'auth-create-admin',
    urlSource: 'DATABASE_URL',
  })
  // Redis being unreachable is reported once, by the revoker's warning, not by ioredis on every reconnection
  redis.on('error', () => {})
  try {
    const { applied } = await migrateAuthDatabase(sql)
    if (applied.length > 0) options.log?.(`applied migrations ${applied.join(', ')}`)
    const users = createUsersRepository(sql)
    const revoker = createCredentialRevoker({
      sql,
      revocations: createCredentialRevocationsRepository(sql),
      store: createCredentialRevocationsStore(redis),
      refreshTokens: createRefreshTokensRepository(sql),
      providerAccounts: createProviderAccounts(sql),
      keepForMs:
        options.revocationKeepForMs ??
        revocationKeepForMs({ ACCESS_TOKEN_TTL_SECONDS: 900, SESSION_TTL_SECONDS: 28_800 }),
      // the revocation is committed with the change: a running auth's round delivers it instead
      logger: {
        warn: () =>
          options.log?.(
            'Redis did not take the revocation of what the user held; the running auth delivers it within seconds',
          ),
      },
    })
    const admins = createAdminUseCases({
      sql,
      users,
      passwords: createUserPasswordsRepository(sql),
      registration: createUserUseCases(users, sql, revoker),
      revoker,
    })
    return await admins.makeAdmin(
      { email: options.email, name: options.name, resetPassword: options.resetPassword },
      options.password,
    )
  } finally {
    redis.disconnect()
    await sql.end({ timeout: 5 })
  }
}

/** The line the command prints: what was done, to whom (never the password). */
export function describeOutcome({ action, passwordReset, user }: AdminOutcome): string {
  const done =
    action === 'created'
      ? `created admin ${user.id} ${user.email}`
      : action === 'promoted'
        ? `promoted ${user.id} ${user.email} to admin`
        : `${user.id} ${user.email} already is an active admin`
  return passwordReset ? `${done} (password reset)` : done
}

export interface CommandIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/** One line read from the terminal without echo; Ctrl-C or Ctrl-D cancels. */
async function askHidden(io: CommandIo, question: string): Promise<string> {
  // readline echoes what is typed to its output: give it one that drops everything, and ask on stderr directly
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() })
  const terminal = createInterface({ input: io.stdin, output: silent, terminal: true })
  io.stderr.write(question)
  try {
    return await new Promise<string>((resolve, reject) => {
      const cancel = () => reject(new CommandError('cancelled', 130))
      // in raw mode Ctrl-C is a keypress, which readline reports as its own event (no process signal involved)
      terminal.once('SIGINT', cancel)
      terminal.once('close', cancel)
      terminal.question('').then(resolve, reject)
    })
  } finally {
    io.stderr.write('\n')
    terminal.close()
  }
}

function passwordSource(io: CommandIo, fromEnvironment: string | undefined, email: string): PasswordSource {
  return async () => {
    if (fromEnvironment !== undefined) return fromEnvironment
    if (!io.stdin.isTTY) {
      throw new CommandError(
        'a password is needed: set MERIDIAN_ADMIN_PASSWORD, or run in a terminal to be asked',
      )
    }
    const password = await askHidden(io, `Password for ${email}: `)
    // typed blind, so typed twice
    if ((await askHidden(io, 'Repeat the password: ')) !== password) {
      throw new CommandError('the two passwords differ; nothing was changed')
    }
    return password
  }
}

function explain(error: unknown): { message: string; exitCode: number } {
  if (error instanceof CommandError) return { message: error.message, exitCode: error.exitCode }
  if (error instanceof ConfigError) return { message: error.message, exitCode: 1 }
  if (isAppError(error)) {
    const details = (error.details ?? []).map((detail) => `\n  - ${detail.field}: ${detail.message}`).join('')
    return { message: `${error.message}${details}`, exitCode: 1 }
  }
  if (isDatabaseUnavailable(error)) {
    const reason = error instanceof Error ? error.message : String(error)
    return {
      message: `cannot reach auth's database (${reason}); is PostgreSQL running? ./scripts/infra up`,
      exitCode: 1,
    }
  }
  return { message: error instanceof Error ? error.message : String(error), exitCode: 1 }
}

/** The whole command: prints the outcome on stdout, problems and prompts on stderr; resolves to the exit code. */
export async function runCreateAdminCommand(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: CommandIo,
): Promise<number> {
  try {
    const parsed = parseCreateAdminArguments(argv)
    if (parsed.help) {
      io.stdout.write(`${createAdminUsage}\n`)
      return 0
    }
    const config = loadConfig(CreateAdminEnv, env)
    const { email, name, resetPassword } = parsed
    const outcome = await createAdmin({
      email,
      name,
      resetPassword,
      databaseUrl: config.DATABASE_URL,
      redisUrl: config.REDIS_URL,
      redisTls: config,
      redisSentinel: config,
      revocationKeepForMs: revocationKeepForMs(config),
      password: passwordSource(io, config.MERIDIAN_ADMIN_PASSWORD, normaliseEmail(email)),
      log: (line) => io.stderr.write(`create-admin: ${line}\n`),
    })
    io.stdout.write(`${describeOutcome(outcome)}\n`)
    return 0
  } catch (error) {
    const { message, exitCode } = explain(error)
    io.stderr.write(`create-admin: ${message}\n`)
    if (exitCode === 2) io.stderr.write(`${createAdminUsage}\n`)
    return exitCode
  }
}
