// /api/v1/admin/services (admins): every service the gateway routes, with its instances in Consul and their health,
// and its maintenance switch — on with PUT …/{name}/maintenance, off with DELETE — written to the Consul KV key each
// instance follows (meridian/<its Consul name>/maintenance), so the whole service turns within a second. Each switch
// is recorded in the gateway's audit trail.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppError,
  type InstanceHealth,
  MaintenanceBody,
  type MaintenanceSetting,
  OperatedService,
  OperatedServiceParams,
  OperatedServices,
} from '@meridian/contracts'
import {
  type ConsulClient,
  errorResponses,
  maintenanceDefaults,
  parseMaintenance,
  runtimeSettingKeys,
  runtimeSettingsPrefix,
  security,
} from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import { Type } from 'typebox'
import { type GatewayAuditTrail, recordAction } from '../../operations/audit-stream.ts'

export interface AdminServicesOptions {
  consul(): ConsulClient
  /** every routed service: its own name -> the name it registers under in Consul */
  services: ReadonlyMap<string, string>
  /** the gateway's own audit trail: each switch is recorded */
  audit: GatewayAuditTrail
}

interface HealthEntry {
  Node?: { Address?: string }
  Service: { ID: string; Address?: string; Port: number }
  Checks?: { Name: string; Status: string; Output?: string }[]
}

const healthRank: Record<InstanceHealth, number> = { passing: 0, warning: 1, critical: 2 }

/** The worst status among the checks (an unknown status counts as critical). */
function worstOf(statuses: string[]): InstanceHealth {
  let worst: InstanceHealth = 'passing'
  for (const status of statuses) {
    const known: InstanceHealth = status === 'passing' || status === 'warning' ? status : 'critical'
    if (healthRank[known] > healthRank[worst]) worst = known
  }
  return worst
}

const maintenanceKey = (consulName: string) =>
  `/v1/kv/${runtimeSettingsPrefix(consulName)}${runtimeSettingKeys.maintenance}`

export const adminServicesRoutes: FastifyPluginAsyncTypebox<AdminServicesOptions> = async (
  app,
  { consul, services, audit },
) => {
  const adminOnly = [app.authenticate, app.requireRole('admin')] as onRequestHookHandler[]
  const tags = ['operations']

  /** Consul failing is the operator's 503, never a 500. */
  async function fromConsul<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw new AppError(503, 'SERVICE_UNAVAILABLE', {
        message: 'Consul is unavailable',
        retryAfter: 5,
        cause: error,
      })
    }
  }

  async function describe(name: string): Promise<OperatedService> {
    const consulName = services.get(name)!
    const [health, setting] = await fromConsul(() =>
      Promise.all([
        consul().get<HealthEntry[]>(`/v1/health/service/${encodeURIComponent(consulName)}`),
        consul().get<{ Value: string | null }[]>(maintenanceKey(consulName), {
          query: { raw: undefined },
          accept: [404],
        }),
      ]),
    )
    const raw = setting.status === 404 ? undefined : setting.body[0]?.Value
    const maintenance = parseMaintenance(
      raw === undefined || raw === null ? undefined : Buffer.from(raw, 'base64').toString('utf8'),
    )
    return {
      name,
      consulName,
      instances: health.body.map((entry) => ({
        id: entry.Service.ID,
        address: entry.Service.Address || entry.Node?.Address || '',
        port: entry.Service.Port,
        health: worstOf((entry.Checks ?? []).map((check) => check.Status)),
        checks: (entry.Checks ?? []).map((check) => ({
          name: check.Name,
          status: check.Status,
          output: (check.Output ?? '').slice(0, 500),
        })),
      })),
      maintenance: maintenance
        ? { message: maintenance.message, retryAfter: maintenance.retryAfterSeconds }
        : null,
    }
  }

  /** The Consul name of a routed service; 404 for any other name. */
  function consulNameOf(name: string): string {
    const consulName = services.get(name)
    if (consulName === undefined) throw AppError.notFound(`Service ${name} not found`)
    return consulName
  }

  app.get(
    '/api/v1/admin/services',
    {
      onRequest: adminOnly,
      schema: {
        tags,
        summary:
          'Every routed service: its instances in Consul with their health, and its maintenance switch (admins)',
        security: security.requires('admin:read'),
        response: { 200: OperatedServices, ...errorResponses(401, 403, 503) },
      },
    },
    async () => ({ data: await Promise.all([...services.keys()].sort().map(describe)) }),
  )

  app.put(
    '/api/v1/admin/services/:name/maintenance',
    {
      onRequest: adminOnly,
      schema: {
        tags,
        summary: "Turn a service's maintenance on: every route but health and metrics answers 503 (admins)",
        description: `Both fields are optional: "${maintenanceDefaults.message}" and ${maintenanceDefaults.retryAfterSeconds} s by default. Every instance follows within a second.`,
        security: security.requires('admin:write'),
        params: OperatedServiceParams,
        body: MaintenanceBody,
        response: { 200: OperatedService, ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request) => {
      const { name } = request.params
      const key = maintenanceKey(consulNameOf(name))
      const setting: MaintenanceSetting = {
        message: request.body.message ?? maintenanceDefaults.message,
        retryAfter: request.body.retryAfter ?? maintenanceDefaults.retryAfterSeconds,
      }
      await fromConsul(() => consul().put(key, { body: setting }))
      request.log.info({ service: name, maintenance: setting }, 'maintenance switched on')
      await recordAction(audit, request, {
        action: 'maintenance.on',
        target: `service:${name}`,
        detail: { ...setting },
      })
      return describe(name)
    },
  )

  app.delete(
    '/api/v1/admin/services/:name/maintenance',
    {
      onRequest: adminOnly,
      schema: {
        tags,
        summary: "Turn a service's maintenance off (admins)",
        security: security.requires('admin:write'),
        params: OperatedServiceParams,
        response: { 204: Type.Null({ description: 'off' }), ...errorResponses(401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { name } = request.params
      const key = maintenanceKey(consulNameOf(name))
      await fromConsul(() => consul().delete(key))
      request.log.info({ service: name }, 'maintenance switched off')
      await recordAction(audit, request, { action: 'maintenance.off', target: `service:${name}` })
      return reply.code(204).send(null)
    },
  )
}
