// The upstream: the real auth service process (services/auth/src/main.ts), registered in Consul under a name of this
// run's own so the gateway finds it and it never mixes with a developer's `auth`.
import { fileURLToPath } from 'node:url'
import {
  type ConsulClient,
  createConsulClient,
  type RegistryLogger,
  registerService,
  type ServiceRegistration,
} from '@meridian/service-kit'
import { type StartedProcess, startAnswering } from './child-process.ts'

/** services/auth, found next to the package's entry (src/app.ts), as bench-database.ts finds its migrations. */
const authDir = fileURLToPath(new URL('..', import.meta.resolve('@meridian/auth')))
export const authMain = fileURLToPath(new URL('./main.ts', import.meta.resolve('@meridian/auth')))

export interface UpstreamOptions {
  port: number
  databaseUrl: string
  redisUrl: string
  kafkaBrokers: string
  inheritedEnv: NodeJS.ProcessEnv
  /** a path it answers 200 to once its key ring has started */
  readyPath: string
  /** the run's SERVICE_CREDENTIAL, which the gateway sends to introspect API keys at auth's /internal/ route */
  serviceCredential: string
}

export function startAuthService(options: UpstreamOptions): Promise<StartedProcess> {
  const secret = (what: string) => `bench-gateway-${what}-${options.port}-0123456789abcdef`
  return startAnswering(
    {
      name: 'auth',
      command: process.execPath,
      args: ['--import', import.meta.resolve('tsx'), authMain],
      cwd: authDir,
      env: {
        ...options.inheritedEnv,
        NODE_ENV: 'production',
        // the bench's engines are the development ones, plaintext on this machine's loopback
        ENGINES_PLAINTEXT_ALLOWED: 'true',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        PORT: String(options.port),
        DATABASE_URL: options.databaseUrl,
        REDIS_URL: options.redisUrl,
        KAFKA_BROKERS: options.kafkaBrokers,
        // registered by the bench under the run's own name (see registerUpstream): auth's name is fixed to `auth`
        CONSUL_REGISTER: 'false',
        // far above anything a run sends: a 429 never happens (the JWKS route is exempt from the limiter anyway)
        RATE_LIMIT_MAX: '1000000000',
        // production refuses the public development secrets; these are the run's own
        SIGNING_KEY_ENCRYPTION_SECRET: secret('signing-key'),
        OIDC_COOKIE_KEYS: secret('oidc-cookie'),
        OIDC_WEB_CLIENT_SECRET: secret('web-client'),
        OIDC_MACHINE_CLIENT_SECRET: secret('machine-client'),
        SERVICE_CREDENTIAL: options.serviceCredential,
        // and its development redirect addresses: the bench's clients never redirect
        OIDC_SPA_REDIRECT_URIS: 'https://bench.invalid/callback',
        OIDC_WEB_REDIRECT_URIS: 'https://bench.invalid/callback',
      },
    },
    `http://127.0.0.1:${options.port}${options.readyPath}`,
  )
}

export interface ConsulSettings {
  address: string
  token?: string
}

const report = (details: object, message?: string) => {
  process.stderr.write(`[bench:gateway] consul: ${message ?? ''} ${JSON.stringify(details)}\n`)
}
const quietLogger: RegistryLogger = { debug: () => {}, info: () => {}, warn: report, error: report }

/**
 * Registers the running auth process as `serviceName` with service-kit's own registration (TTL heartbeat passed
 * while its /health/ready answers 200, plus Consul's HTTP check of the same path): what runService would register,
 * under another name.
 */
export function registerUpstream(
  consul: ConsulSettings,
  serviceName: string,
  port: number,
): Promise<ServiceRegistration> {
  return registerService({
    consul: { address: consul.address, ...(consul.token ? { token: consul.token } : {}) },
    name: serviceName,
    address: '127.0.0.1',
    port,
    tags: ['bench'],
    meta: { version: 'bench', region: 'local', az: 'local-a' },
    readiness: async () => {
      const response = await fetch(`http://127.0.0.1:${port}/health/ready`, {
        signal: AbortSignal.timeout(2000),
      })
      await response.arrayBuffer()
      return response.status === 200
    },
    logger: quietLogger,
    // passing within a second of registering, so the gateway's first discovery already sees the instance
    timing: { heartbeatIntervalMs: 1000, ttl: '10s', httpCheckInterval: '5s' },
  })
}

/** Removes every instance of `serviceName` this Consul agent still holds (the run's name: nobody else's). */
export async function deregisterLeftovers(consul: ConsulSettings, serviceName: string): Promise<number> {
  const client: ConsulClient = createConsulClient({
    address: consul.address,
    ...(consul.token ? { token: consul.token } : {}),
  })
  try {
    const { body } = await client.get<Record<string, { ID: string; Service: string }>>('/v1/agent/services')
    const leftovers = Object.values(body).filter((service) => service.Service === serviceName)
    for (const service of leftovers) {
      await client.put(`/v1/agent/service/deregister/${encodeURIComponent(service.ID)}`)
    }
    return leftovers.length
  } finally {
    await client.close()
  }
}
