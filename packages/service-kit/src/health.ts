// Health endpoints: /health, /health/live, /health/ready and /healthz, from checks each service registers.
import { HealthResponse } from '@meridian/contracts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** A dependency check: resolves when healthy, rejects (or returns a problem text) when not. */
export type HealthCheck = () => Promise<unknown>

export interface HealthRegistry {
  add(name: string, check: HealthCheck): void
  /** runs every check with a timeout; 'ok' or what is wrong, per dependency */
  run(): Promise<{ healthy: boolean; checks: Record<string, string> }>
  /** set while shutting down: readiness reports not_ready so load balancers and Consul stop sending traffic */
  draining: boolean
}

export function createHealthRegistry(timeoutMs = 2000): HealthRegistry {
  const checks = new Map<string, HealthCheck>()
  const registry: HealthRegistry = {
    draining: false,
    add(name, check) {
      checks.set(name, check)
    },
    async run() {
      const results = await Promise.all(
        [...checks].map(async ([name, check]): Promise<[string, string]> => {
          let timer: NodeJS.Timeout | undefined
          try {
            const outcome = await Promise.race([
              check(),
              new Promise<string>((resolve) => {
                timer = setTimeout(() => resolve(`timed out after ${timeoutMs} ms`), timeoutMs)
              }),
            ])
            return [name, typeof outcome === 'string' ? outcome : 'ok']
          } catch (error) {
            return [name, error instanceof Error ? error.message : String(error)]
          } finally {
            clearTimeout(timer)
          }
        }),
      )
      const byName = Object.fromEntries(results)
      return { healthy: results.every(([, state]) => state === 'ok'), checks: byName }
    },
  }
  return registry
}

const startedAt = Date.now()

function vitals() {
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage()
  return { uptime: (Date.now() - startedAt) / 1000, memory: { rss, heapTotal, heapUsed, external } }
}

const responses = { 200: HealthResponse, 503: HealthResponse }

/** What a failing check is called in an answer: its problem (an address, a driver's message) goes to the log only. */
export const failingCheck = 'unavailable'

/**
 * The checks as a health endpoint answers them: `ok`, or `unavailable` for a failing one, whose problem is logged
 * (with the request's id) for the operators. A problem's text names internal hosts and ports, and /health is asked by
 * anyone who reaches the service (the gateway's is public).
 */
function told(request: FastifyRequest, checks: Record<string, string>): Record<string, string> {
  const answered: Record<string, string> = {}
  for (const [name, state] of Object.entries(checks)) {
    if (state === 'ok') {
      answered[name] = state
      continue
    }
    answered[name] = failingCheck
    request.log.warn({ check: name, problem: state }, 'health check failing')
  }
  return answered
}

export function healthRoutes(app: FastifyInstance, health: HealthRegistry): void {
  const options = (response: Record<number, typeof HealthResponse>) => ({
    schema: { tags: ['operations'], response },
    // probes must never be rate limited
    config: { rateLimit: false as const },
  })

  /** 200 when every dependency check is ok, else 503; `healthyStatus` is what the endpoint calls healthy. */
  const dependencyReport =
    (healthyStatus: 'ok' | 'healthy') => async (request: FastifyRequest, reply: FastifyReply) => {
      const { healthy, checks } = await health.run()
      return reply
        .code(healthy ? 200 : 503)
        .send({ status: healthy ? healthyStatus : 'degraded', ...vitals(), checks: told(request, checks) })
    }

  app.get('/health', options(responses), dependencyReport('ok'))
  app.get('/healthz', options(responses), dependencyReport('healthy'))

  app.get('/health/live', options({ 200: HealthResponse }), async () => ({
    status: 'alive' as const,
    ...vitals(),
    checks: {},
  }))

  app.get('/health/ready', options(responses), async (request, reply) => {
    const { healthy, checks } = await health.run()
    const ready = healthy && !health.draining
    const answered = told(request, checks)
    if (health.draining) answered.shutdown = 'draining'
    return reply
      .code(ready ? 200 : 503)
      .send({ status: ready ? 'ready' : 'not_ready', ...vitals(), checks: answered })
  })
}
