// The operators' view of the running system through the gateway (GET /api/v1/admin/services): every routed service
// with its instances in Consul and their health, and its maintenance switch (Consul KV meridian/<service>/maintenance).
import { type Static, Type } from 'typebox'

export const InstanceHealth = Type.Union(
  [Type.Literal('passing'), Type.Literal('warning'), Type.Literal('critical')],
  { description: "the worst of the instance's checks" },
)
export type InstanceHealth = Static<typeof InstanceHealth>

export const ServiceInstanceView = Type.Object(
  {
    id: Type.String(),
    address: Type.String(),
    port: Type.Integer(),
    health: InstanceHealth,
    checks: Type.Array(
      Type.Object(
        { name: Type.String(), status: Type.String(), output: Type.String() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type ServiceInstanceView = Static<typeof ServiceInstanceView>

export const MaintenanceSetting = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 500 }),
    retryAfter: Type.Integer({ minimum: 1, maximum: 86_400, description: 'seconds, sent as Retry-After' }),
  },
  { additionalProperties: false },
)
export type MaintenanceSetting = Static<typeof MaintenanceSetting>

export const OperatedService = Type.Object(
  {
    /** the service's own name (the route table's, and its settings' in Consul KV) */
    name: Type.String(),
    /** the name its instances register under in Consul */
    consulName: Type.String(),
    instances: Type.Array(ServiceInstanceView),
    /** on: every route but health and metrics answers 503; null: serving */
    maintenance: Type.Union([MaintenanceSetting, Type.Null()]),
  },
  { additionalProperties: false },
)
export type OperatedService = Static<typeof OperatedService>

export const OperatedServices = Type.Object(
  { data: Type.Array(OperatedService) },
  { additionalProperties: false },
)
export type OperatedServices = Static<typeof OperatedServices>

export const OperatedServiceParams = Type.Object({ name: Type.String({ pattern: '^[a-z][a-z0-9-]{0,62}$' }) })
export type OperatedServiceParams = Static<typeof OperatedServiceParams>

/** PUT …/maintenance: both optional (the service's defaults: "Service under maintenance", 60 s). */
export const MaintenanceBody = Type.Partial(MaintenanceSetting, { additionalProperties: false })
export type MaintenanceBody = Static<typeof MaintenanceBody>
