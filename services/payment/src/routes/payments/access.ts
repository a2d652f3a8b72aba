// Who may do what with the payments resource: any authenticated caller (bearer token, session or API key) pays;
// a payment is read by its payer, its order's customer or an admin (checked by the use case, which knows both).
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { PaymentsGuards } from './index.ts'

export function paymentsGuards(app: FastifyInstance): PaymentsGuards {
  // authentication runs first, in onRequest: a caller without credentials is 401 before any validation answers
  const authenticate = app.authenticate as onRequestHookHandler
  return { authenticated: [authenticate] }
}
