// Who may call the documents resource: any authenticated caller (in onRequest, so a caller without credentials is
// 401 before any validation answers). Which documents they see and manage is the use cases' to decide (members see
// a document, its owner or an admin manages and deletes it: domain/memberships.ts).
import type { FastifyInstance, onRequestHookHandler } from 'fastify'

/** Who may call (the routes import this type from here, never the other way: no import cycle). */
export interface DocumentsGuards {
  /** onRequest of every route: a credential is required */
  authenticated?: onRequestHookHandler[]
}

export function documentsGuards(app: FastifyInstance): DocumentsGuards {
  return { authenticated: [app.authenticate as onRequestHookHandler] }
}
