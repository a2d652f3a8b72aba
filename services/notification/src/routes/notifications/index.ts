// /api/v1/notifications: a user's notifications (an admin may read anyone's), newest first, and marking them read,
// one by one or many at once (the realtime gateway's notifications:read calls the latter).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  MarkNotificationsReadBody,
  MarkNotificationsReadResult,
  Notification,
  NotificationIdParams,
  NotificationListQuery,
  Paginated,
} from '@meridian/contracts'
import { authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import type { NotificationUseCases } from '../../domain/notifications.ts'

/** Who may call (see access.ts); without guards every route answers 401 for want of a principal. */
export interface NotificationsGuards {
  /** onRequest of every route: a credential is required */
  authenticated?: onRequestHookHandler[]
}

export type NotificationsRoutesOptions = {
  notifications: NotificationUseCases
  guards?: NotificationsGuards
}

export const notificationsRoutes: FastifyPluginAsyncTypebox<NotificationsRoutesOptions> = async (
  app,
  { notifications, guards = {} },
) => {
  const tags = ['notifications']
  const onRequest = guards.authenticated ?? []

  app.get(
    '/notifications',
    {
      onRequest,
      schema: {
        tags,
        summary:
          "The caller's notifications, newest first: page, limit, sort, unread, type; userId for an admin",
        description:
          "userId names whose notifications: an admin may name anyone, a user only themself (another user's id is 403).",
        security: security.requires('notifications:read'),
        querystring: NotificationListQuery,
        response: { 200: Paginated(Notification), ...errorResponses(401, 403, 422) },
      },
    },
    async (request) =>
      notifications.listNotifications(
        request.query,
        authenticatedPrincipal(request),
        request.url.split('?')[0] ?? request.url,
      ),
  )

  app.get(
    '/notifications/:id',
    {
      onRequest,
      schema: {
        tags,
        summary: "A notification: its user's, or an admin's to read",
        description:
          "Another user's notification answers 404, as an unknown one does: its existence is not told.",
        security: security.requires('notifications:read'),
        params: NotificationIdParams,
        response: { 200: Notification, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => notifications.getNotification(request.params.id, authenticatedPrincipal(request)),
  )

  // on the collection (as GitHub's PUT /notifications is): a path of its own beside /notifications/{id} would also
  // route GET /notifications/<that word> to a notification
  app.patch(
    '/notifications',
    {
      onRequest,
      schema: {
        tags,
        summary:
          "Mark several of the caller's notifications read: answers the ids of theirs that are read now",
        description:
          "Ids of other users' notifications, or of none, are left out of `read` without an error. Marking a read notification again keeps its first readAt.",
        security: security.requires('notifications:write'),
        body: MarkNotificationsReadBody,
        response: { 200: MarkNotificationsReadResult, ...errorResponses(401, 422) },
      },
    },
    async (request) => ({
      success: true as const,
      read: await notifications.markManyRead(request.body.notificationIds, authenticatedPrincipal(request)),
    }),
  )

  app.post(
    '/notifications/:id/read',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Mark a notification read (its user only): the notification with readAt; again, the first readAt',
        description:
          "Another user's notification is 404 (its existence is not told); an admin marking another user's is 403.",
        security: security.requires('notifications:write'),
        params: NotificationIdParams,
        response: { 200: Notification, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => notifications.markRead(request.params.id, authenticatedPrincipal(request)),
  )
}
