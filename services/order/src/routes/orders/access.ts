// Who may do what with orders: every route needs a credential (401 first, before any validation answers). Whose
// orders a caller may place, read and cancel depends on the order, so the handlers check it (domain/access.ts):
// the customer or an admin; another customer is 403 where the path or body names the customer (placing, a user's
// list) and 404 where it names only the order (its existence is not told).
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { OrdersGuards } from './index.ts'

export function ordersGuards(app: FastifyInstance): OrdersGuards {
  return { authenticated: [app.authenticate as onRequestHookHandler] }
}
