// Health responses (spec: Health response).
import { type Static, Type } from 'typebox'
import { StringEnum } from './schema-kinds.ts'

export const healthStatuses = ['ok', 'healthy', 'degraded', 'alive', 'ready', 'not_ready'] as const

export const HealthResponse = Type.Object({
  status: StringEnum(healthStatuses),
  uptime: Type.Number({ description: 'seconds' }),
  memory: Type.Object({
    rss: Type.Number(),
    heapTotal: Type.Number(),
    heapUsed: Type.Number(),
    external: Type.Number(),
  }),
  checks: Type.Record(Type.String(), Type.String(), {
    description: "dependency name to 'ok' or what is wrong with it",
  }),
})
export type HealthResponse = Static<typeof HealthResponse>
