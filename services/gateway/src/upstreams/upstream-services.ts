// The routed services as the proxy sees them: each one's healthy instances (followed in Consul), the balancer
// that picks among them and ejects failing ones, and its circuit breaker.
import type { RegistryLogger, ServiceDiscovery, ServiceInstance } from '@meridian/service-kit'
import { Balancer, type EjectionPolicy } from '../domain/balancer.ts'
import {
  type Admission,
  CircuitBreaker,
  type CircuitBreakerPolicy,
  type CircuitState,
} from '../domain/circuit-breaker.ts'

export interface UpstreamPolicy {
  ejection: EjectionPolicy
  breaker: CircuitBreakerPolicy
  /** Retry-After, seconds, when a service has no instance at all in Consul */
  noInstanceRetryAfterSeconds: number
}

export interface UpstreamService {
  /** logical name (the route table's) */
  readonly name: string
  /** the name it is registered under in Consul */
  readonly consulName: string
  admit(): Admission
  /** an instance for this attempt, or how long until one may be back */
  pick(
    exclude: ReadonlySet<string>,
  ): { instance: ServiceInstance } | { instance: undefined; retryAfterSeconds: number }
  /** Retry-After, seconds, for a request that found no instance to answer it */
  retryAfterSeconds(): number
  /** the outcome of one attempt on one instance (ejection bookkeeping) */
  attemptSucceeded(instance: ServiceInstance): void
  attemptFailed(instance: ServiceInstance, reason: string): void
  /** the outcome of a whole request after its retries (circuit bookkeeping) */
  requestSucceeded(): void
  requestFailed(): void
  requestAbandoned(probe: boolean): void
  /** a healthy instance for the gateway's own calls (/docs), without touching the proxy's rotation */
  anyInstance(): ServiceInstance | undefined
  status(): UpstreamStatus
}

export interface UpstreamStatus {
  /** passing in Consul */
  instances: number
  /** passing and not ejected */
  available: number
  ejected: string[]
  circuit: CircuitState
}

export interface UpstreamServices {
  get(name: string): UpstreamService | undefined
  all(): UpstreamService[]
  /** resolves when every discovery has its first list (or after `timeoutMs`, whichever is first) */
  ready(timeoutMs: number): Promise<void>
  close(): Promise<void>
}

export function createUpstreamServices(options: {
  /** logical name -> Consul name */
  services: Map<string, string>
  discover: (consulName: string) => ServiceDiscovery
  policy: UpstreamPolicy
  logger: RegistryLogger
  now?: () => number
}): UpstreamServices {
  const { policy, logger } = options
  const now = options.now ?? Date.now
  const discoveries: ServiceDiscovery[] = []
  const byName = new Map<string, UpstreamService>()

  for (const [name, consulName] of options.services) {
    const discovery = options.discover(consulName)
    discoveries.push(discovery)
    const balancer = new Balancer<ServiceInstance>(policy.ejection, now)
    const breaker = new CircuitBreaker(policy.breaker, now)
    balancer.update(discovery.instances())
    discovery.onChange((instances) => balancer.update(instances))
    const log = { upstream: name }
    const retryAfter = () => {
      const returnInMs = balancer.nextReturnInMs()
      return returnInMs === undefined
        ? policy.noInstanceRetryAfterSeconds
        : Math.max(1, Math.ceil(returnInMs / 1000))
    }

    byName.set(name, {
      name,
      consulName,
      admit: () => breaker.admit(),
      pick(exclude) {
        const picked = balancer.pick(exclude)
        return picked.instance
          ? { instance: picked.instance }
          : { instance: undefined, retryAfterSeconds: retryAfter() }
      },
      retryAfterSeconds: () => retryAfter(),
      attemptSucceeded: (instance) => balancer.succeeded(instance.id),
      attemptFailed(instance, reason) {
        const ejectedForMs = balancer.failed(instance.id)
        if (ejectedForMs !== undefined) {
          logger.warn({ ...log, instance: instance.id, reason, ejectedForMs }, 'upstream instance ejected')
        }
      },
      requestSucceeded: () => breaker.succeeded(),
      requestFailed() {
        if (breaker.failed())
          logger.warn({ ...log, openMs: policy.breaker.openMs }, 'upstream circuit opened')
      },
      requestAbandoned: (probe) => breaker.abandoned(probe),
      anyInstance: () => discovery.instances()[0],
      status() {
        const snapshot = balancer.snapshot()
        return { ...snapshot, circuit: breaker.current }
      },
    })
  }

  return {
    get: (name) => byName.get(name),
    all: () => [...byName.values()],
    async ready(timeoutMs) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled(discoveries.map((discovery) => discovery.ready())),
        new Promise((resolve) => {
          timer = setTimeout(resolve, timeoutMs)
        }),
      ])
      clearTimeout(timer)
    },
    async close() {
      await Promise.all(discoveries.map((discovery) => discovery.close()))
    },
  }
}
