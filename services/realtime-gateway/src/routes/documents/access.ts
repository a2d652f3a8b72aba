// Who may call the documents resource: any authenticated caller (in onRequest, so a caller without credentials is
// 401 before any validation answers). Which documents they see and manage is the use cases' to decide (members see
// a document, its owner or an admin manages and deletes it: domain/memberships.ts).
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { DocumentsGuards } from './index.ts'

export function documentsGuards(app: FastifyInstance): DocumentsGuards {
  return { authenticated: [app.authenticate as onRequestHookHandler] }
}
