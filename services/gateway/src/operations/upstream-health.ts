// What /health says about the routed services: how many instances each has, how many are ejected, its circuit (no
// instance ids, no Consul names: /health is public at the gateway; /api/v1/admin/services has the detail).
//
// They are reported beside the checks, not as checks: /health is 200 exactly when every check is ok (spec), and
// the gateway stays healthy and ready while one service has no instance (it answers that service's routes with 503
// by itself). Its own checks are Redis and Consul; readiness, /healthz and its Consul heartbeat follow only those.
import type { FastifyInstance } from 'fastify'
import type { UpstreamServices, UpstreamStatus } from '../upstreams/upstream-services.ts'

/** A routed service as the public /health tells it. */
interface PublicUpstreamStatus {
  instances: number
  available: number
  /** how many instances are ejected */
  ejected: number
  circuit: UpstreamStatus['circuit']
}

export function reportUpstreamsInHealth(app: FastifyInstance, upstreams: UpstreamServices): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.url !== '/health' || request.method !== 'GET' || typeof payload !== 'string') {
      return done(null, payload)
    }
    try {
      const body = JSON.parse(payload) as Record<string, unknown>
      // counts only: which instances are ejected (their ids, addresses) is for the operators' /api/v1/admin/services
      const report: Record<string, PublicUpstreamStatus> = {}
      for (const service of upstreams.all()) {
        const { instances, available, ejected, circuit } = service.status()
        report[service.name] = { instances, available, ejected: ejected.length, circuit }
      }
      body.upstreams = report
      reply.removeHeader('content-length')
      done(null, JSON.stringify(body))
    } catch (error) {
      done(error as Error)
    }
  })
}
