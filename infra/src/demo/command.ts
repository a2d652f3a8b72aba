// The seed command (scripts/seed, ./scripts/dev --demo): its settings from the environment, the refusal outside
// development, the demo admin made with auth's create-admin, the seed through the gateway, and the credentials
// printed. Apart from its entry point (main.ts) so that tests run it as a function or a process alike.
import { join } from 'node:path'
import { repoRoot } from '../layout.ts'
import { makeAdministrator } from '../system/administrator.ts'
import { demoAdmin, demoCustomer, demoSignInHint } from './content.ts'
import { type SeedOutcome, seedDemo } from './seed.ts'

export const seedUsage = `usage: scripts/seed [--sign-in-hint]

Fills a running Meridian (./scripts/dev) with demo data, through the gateway's public API: a catalogue of five
products, a demo customer, orders that were delivered, shipped, declined (payment_failed) and cancelled, a chat
room with a conversation and a shared document. Then prints the demo accounts' credentials. Running it again
keeps what exists and adds nothing. The demo admin is the one thing made beside the API: with auth's
create-admin, in auth's database.

Refused unless NODE_ENV is development or test: the demo accounts' passwords are public.

  --sign-in-hint   only print the line the console's sign-in page shows under ./scripts/dev --demo
                   (the gateway's CONSOLE_SIGN_IN_HINT), and do nothing else

Environment (scripts/seed sets them for the local system):
  MERIDIAN_GATEWAY_URL            the gateway (default http://127.0.0.1:8080)
  MERIDIAN_PAYMENT_PROVIDER_URL   where cards are tokenized (default http://127.0.0.1:3099, the simulator)
  AUTH_DATABASE_URL               auth's database, for the demo admin (required)
  REDIS_URL                       the services' Redis (default redis://127.0.0.1:6379)
  REDIS_TLS_CA                    the CA of a Redis reached over TLS (rediss://), as the services take it`

export interface SeedSettings {
  gatewayUrl: string
  paymentProviderUrl: string
  authDatabaseUrl: string
  redisUrl: string
  /** the CA's PEM file of a Redis over TLS (REDIS_TLS_CA) */
  redisCaFile?: string
}

/** A problem the person running the command can fix: one message, exit code 1 (2: the command line). */
export class SeedCommandError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
    this.name = 'SeedCommandError'
  }
}

function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name] || fallback
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new SeedCommandError(`${name} must be an http(s) URL (got '${value}')`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SeedCommandError(`${name} must be an http(s) URL (got '${value}')`)
  }
  // trailing slashes cut by a scan: the obvious pattern backtracks quadratically on a long run of slashes
  let end = value.length
  while (end > 0 && value[end - 1] === '/') end -= 1
  return value.slice(0, end)
}

/** The command's settings, read once from `env`; fails when it may not run (production) or lacks a setting. */
export function seedSettings(env: NodeJS.ProcessEnv): SeedSettings {
  const mode = env.NODE_ENV
  if (mode !== 'development' && mode !== 'test') {
    throw new SeedCommandError(
      `refused: NODE_ENV is ${mode ? `'${mode}'` : 'unset (which is production)'}; the demo's accounts have public ` +
        'passwords, so it runs only where NODE_ENV is development or test (scripts/seed and ./scripts/dev --demo set it)',
    )
  }
  const authDatabaseUrl = env.AUTH_DATABASE_URL
  if (!authDatabaseUrl) {
    throw new SeedCommandError("AUTH_DATABASE_URL is required: auth's database, where the demo admin is made")
  }
  const redisUrl = env.REDIS_URL || 'redis://127.0.0.1:6379'
  if (!/^rediss?:\/\//.test(redisUrl)) throw new SeedCommandError('REDIS_URL must be a redis:// URL')
  return {
    gatewayUrl: httpUrl(env, 'MERIDIAN_GATEWAY_URL', 'http://127.0.0.1:8080'),
    paymentProviderUrl: httpUrl(env, 'MERIDIAN_PAYMENT_PROVIDER_URL', 'http://127.0.0.1:3099'),
    authDatabaseUrl,
    redisUrl,
    ...(env.REDIS_TLS_CA ? { redisCaFile: env.REDIS_TLS_CA } : {}),
  }
}

/** What the command prints on stdout once the data is there: where to go and the accounts to sign in with. */
export function describeSeed(settings: SeedSettings, outcome: SeedOutcome): string {
  const states = outcome.orders.map((order) => order.status).join(', ')
  return [
    '',
    'Meridian demo data is ready:',
    `  ${outcome.products.length} products, orders (${states}), the chat room "Demo lounge", the document "Welcome to Meridian"`,
    '',
    `Sign in to the console at ${settings.gatewayUrl}/console/ with either account:`,
    `  customer  ${demoCustomer.email}  password ${demoCustomer.password}`,
    `  admin     ${demoAdmin.email}     password ${demoAdmin.password}`,
    '',
    'These are fixed development passwords, public in the repository: never seed a system others can reach.',
    '',
  ].join('\n')
}

export interface SeedIo {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/** The whole command; resolves to its exit code. */
export async function runSeedCommand(argv: string[], env: NodeJS.ProcessEnv, io: SeedIo): Promise<number> {
  const say = (line: string) => io.stderr.write(`seed: ${line}\n`)
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(`${seedUsage}\n`)
      return 0
    }
    if (argv.length === 1 && argv[0] === '--sign-in-hint') {
      io.stdout.write(`${demoSignInHint}\n`)
      return 0
    }
    if (argv.length > 0) throw new SeedCommandError(`unknown argument: ${argv[0]}`, 2)
    const settings = seedSettings(env)
    const action = await makeAdministrator(join(repoRoot, 'services', 'auth'), {
      databaseUrl: settings.authDatabaseUrl,
      redisUrl: settings.redisUrl,
      ...(settings.redisCaFile ? { redisCaFile: settings.redisCaFile } : {}),
      email: demoAdmin.email,
      name: demoAdmin.name,
      password: demoAdmin.password,
    })
    say(`admin ${demoAdmin.email}: ${action === 'unchanged' ? 'exists' : action}`)
    const outcome = await seedDemo({
      gatewayUrl: settings.gatewayUrl,
      paymentProviderUrl: settings.paymentProviderUrl,
      log: say,
    })
    io.stdout.write(`${describeSeed(settings, outcome)}\n`)
    return 0
  } catch (error) {
    say(error instanceof Error ? error.message : String(error))
    if (error instanceof SeedCommandError && error.exitCode === 2) io.stderr.write(`${seedUsage}\n`)
    return error instanceof SeedCommandError ? error.exitCode : 1
  }
}
