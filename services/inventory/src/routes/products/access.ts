// Who may do what with the products resource: anyone reads the catalogue; only an admin creates products, changes
// them and adjusts their stock.
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { ProductsGuards } from './index.ts'

export function productsGuards(app: FastifyInstance): ProductsGuards {
  // authentication runs first, in onRequest: a caller without credentials is 401 before any validation answers
  const authenticate = app.authenticate as onRequestHookHandler
  const adminOnly = app.requireRole('admin') as onRequestHookHandler
  return { write: [authenticate, adminOnly] }
}
