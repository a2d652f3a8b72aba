// The gateway under test: services/gateway's own main.ts in a process of its own, finding the run's auth in Consul.
import { existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type StartedProcess, startAnswering } from './child-process.ts'

/** Not a dependency of the bench (it is another team's service): found by its place in the repository. */
export const gatewayMain = fileURLToPath(new URL('../../../services/gateway/src/main.ts', import.meta.url))

export const gatewayAvailable = () => existsSync(gatewayMain)

export interface GatewayOptions {
  port: number
  consulHttpAddr: string
  consulToken: string | undefined
  redisUrl: string
  /** the run's name of the auth service in Consul: the gateway's route table says `auth` */
  authServiceName: string
  /** where the gateway's JWT pre-check would fetch auth's keys: the run's auth */
  authJwksUrl: string
  /** polled through the gateway until it answers 200 (the route is discovered) */
  readyPath: string
  cpuProfileDir: string | undefined
  inheritedEnv: NodeJS.ProcessEnv
  /** the run's SERVICE_CREDENTIAL, as auth's: API keys are introspected at auth's /internal/ route */
  serviceCredential: string
}

export function startGateway(options: GatewayOptions): Promise<StartedProcess> {
  return startAnswering(
    {
      name: 'gateway',
      command: process.execPath,
      args: [
        '--import',
        import.meta.resolve('tsx'),
        // BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of the gateway, written when it exits (open in Chrome DevTools)
        ...(options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : []),
        gatewayMain,
      ],
      cwd: dirname(dirname(gatewayMain)),
      env: {
        ...options.inheritedEnv,
        NODE_ENV: 'production',
        // the bench's engines are the development ones, plaintext on this machine's loopback
        ENGINES_PLAINTEXT_ALLOWED: 'true',
        LOG_LEVEL: 'warn',
        HOST: '127.0.0.1',
        PORT: String(options.port),
        CONSUL_HTTP_ADDR: options.consulHttpAddr,
        ...(options.consulToken ? { CONSUL_HTTP_TOKEN: options.consulToken } : {}),
        REDIS_URL: options.redisUrl,
        CONSUL_REGISTER: 'false',
        // far above anything a run sends: the limiter's work is measured, a 429 never happens
        RATE_LIMIT_MAX: '1000000000',
        GATEWAY_SERVICE_NAMES: `auth=${options.authServiceName}`,
        AUTH_JWKS_URL: options.authJwksUrl,
        SERVICE_CREDENTIAL: options.serviceCredential,
      },
    },
    `http://127.0.0.1:${options.port}${options.readyPath}`,
  )
}
