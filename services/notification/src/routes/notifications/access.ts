// Who may call the notification routes: every one needs a credential (bearer token, session or API key), checked in
// onRequest so that a caller without one is 401 before any validation answers. Whose notifications a caller reads or
// marks is the use case's to decide (domain/access.ts).
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { NotificationsGuards } from './index.ts'

export function notificationsGuards(app: FastifyInstance): NotificationsGuards {
  return { authenticated: [app.authenticate as onRequestHookHandler] }
}
