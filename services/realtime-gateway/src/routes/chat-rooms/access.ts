// Who may call the chat rooms resource: any authenticated caller (in onRequest, so a caller without credentials is
// 401 before any validation answers). Which rooms they see and manage is the use cases' to decide (members see a room,
// its owner or an admin manages it: domain/memberships.ts).
import type { FastifyInstance, onRequestHookHandler } from 'fastify'

/** Who may call (the routes import this type from here, never the other way: no import cycle). */
export interface ChatRoomsGuards {
  /** onRequest of every route: a credential is required */
  authenticated?: onRequestHookHandler[]
}

export function chatRoomsGuards(app: FastifyInstance): ChatRoomsGuards {
  return { authenticated: [app.authenticate as onRequestHookHandler] }
}
