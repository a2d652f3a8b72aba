// /api/v1/users/{id}/notification-preferences: which channels (in-app, realtime, e-mail) each notification type
// reaches a user by. The user themself or an admin reads and replaces them; every channel is on by default.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  NotificationPreferences,
  NotificationPreferencesBody,
  NotificationPreferencesParams,
} from '@meridian/contracts'
import { authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import type { PreferenceUseCases } from '../../domain/preferences.ts'
import type { NotificationsGuards } from '../notifications/index.ts'

export type NotificationPreferencesRoutesOptions = {
  preferences: PreferenceUseCases
  guards?: NotificationsGuards
}

export const notificationPreferencesRoutes: FastifyPluginAsyncTypebox<
  NotificationPreferencesRoutesOptions
> = async (app, { preferences, guards = {} }) => {
  const tags = ['notifications']
  const onRequest = guards.authenticated ?? []

  app.get(
    '/users/:id/notification-preferences',
    {
      onRequest,
      schema: {
        tags,
        summary: "A user's notification preferences: each type's channels (inApp, realtime, email)",
        description:
          'The user themself or an admin; anyone else is 403. Every channel is on unless turned off. Security mails (a password reset, an address to verify, a password changed) are not notification types and cannot be turned off.',
        security: security.requires('notifications:read'),
        params: NotificationPreferencesParams,
        response: { 200: NotificationPreferences, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => preferences.get(request.params.id, authenticatedPrincipal(request)),
  )

  app.put(
    '/users/:id/notification-preferences',
    {
      onRequest,
      schema: {
        tags,
        summary: "Replace a user's notification preferences: a type or channel left out is on",
        description:
          'The user themself or an admin. Takes effect for notifications made from then on: with email off a type writes no mail, with inApp off it is not listed, with realtime off it is not pushed.',
        security: security.requires('notifications:write'),
        params: NotificationPreferencesParams,
        body: NotificationPreferencesBody,
        response: { 200: NotificationPreferences, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => preferences.replace(request.params.id, request.body, authenticatedPrincipal(request)),
  )
}
