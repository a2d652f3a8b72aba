// The composition a service with processes needs, in one call: the manager over its database, escalations counted
// (meridian_process_escalations_total{type,step}) and logged as errors, the clock that fires deadlines (several
// instances may run it: row locks decide), and the operators' routes under /api/v1 and /api.
import type { Sql } from '@meridian/db'
import { registerVersionedApi, scheduleRounds } from '@meridian/service-kit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { Counter } from 'prom-client'
import type { AnyProcessDefinition } from './definition.ts'
import { createProcessManager, type ProcessAlerts, type ProcessManager } from './manager.ts'
import { adminProcessesRoutes } from './routes.ts'
import type { ProcessStore } from './store.ts'

export interface RegisterProcessesOptions {
  sql: Sql
  processes: readonly AnyProcessDefinition[]
  /** how often the clock looks for steps past their deadline, ms */
  sweepIntervalMs: number
  /** onRequest of the operators' routes: authenticated, and an admin */
  adminOnly: onRequestHookHandler[]
  /** further escalation sinks (a service's own counter) */
  alerts?: ProcessAlerts
  store?: ProcessStore
}

export async function registerProcesses(
  app: FastifyInstance & { metrics: { registry: import('prom-client').Registry } },
  { sql, processes, sweepIntervalMs, adminOnly, alerts, store }: RegisterProcessesOptions,
): Promise<ProcessManager> {
  const escalations = new Counter({
    name: 'meridian_process_escalations_total',
    help: 'process steps or compensations escalated to operators, by process type and step',
    labelNames: ['type', 'step'] as const,
    registers: [app.metrics.registry],
  })
  const manager = createProcessManager({
    sql,
    processes,
    ...(store ? { store } : {}),
    alerts: {
      // the instance stays escalated (GET /admin/processes?escalated=true) until it moves on or an operator acts
      escalated: (details) => {
        escalations.inc({ type: details.type, step: details.step ?? 'none' })
        app.log.error(
          {
            processType: details.type,
            processKey: details.key,
            step: details.step,
            alert: 'process-escalated',
          },
          `process escalated to operators: ${details.reason}`,
        )
        alerts?.escalated(details)
      },
    },
  })
  scheduleRounds(app, {
    name: 'process deadlines',
    intervalMs: sweepIntervalMs,
    round: () => manager.fireDeadlines(),
    describe: (fired) => (fired > 0 ? { fired } : undefined),
  })
  await registerVersionedApi(app, adminProcessesRoutes, { processes: manager, adminOnly })
  return manager
}
