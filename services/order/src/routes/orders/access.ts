// Who may do what with orders: every route needs a credential (401 first, before any validation answers). Whose
// orders a caller may place, read and cancel is decided in one place, the use cases (domain/orders.ts, which take the
// caller and ask domain/access.ts): the customer or an admin; another customer is 403 where the path or body names
// the customer (placing, a user's list) and 404 where it names only the order (its existence is not told). The
// routes import their guards' type from here, never the other way.
import type { FastifyInstance, onRequestHookHandler } from 'fastify'

/** Who may call; without guards every route is open (and answers 401 for want of a principal). */
export interface OrdersGuards {
  /** onRequest of every route: a credential is required */
  authenticated?: onRequestHookHandler[]
}

export function ordersGuards(app: FastifyInstance): OrdersGuards {
  return { authenticated: [app.authenticate as onRequestHookHandler] }
}
