// Users' notification preferences: every type's channels (in-app, realtime, e-mail), on unless turned off, read and
// replaced by the user themself or an admin; and the one-click unsubscribe of a notification mail, which turns e-mail
// of that mail's type off for the token's user and changes nothing else.
import {
  AppError,
  ErrorCode,
  type NotificationPreferenceSet,
  type NotificationPreferences,
  type NotificationPreferencesBody,
  type NotificationType,
  notificationTypes,
} from '@meridian/contracts'
import type { UnsubscribeTokens } from '@meridian/mail'
import type { Principal } from '@meridian/service-kit'
import type { PreferencesRepository } from '../data/preferences-repository.ts'
import { isAdmin, recipientOf } from './access.ts'

const allOn = { inApp: true, realtime: true, email: true } as const

const isNotificationType = (type: string): type is NotificationType =>
  (notificationTypes as readonly string[]).includes(type)

/** Whose preferences a principal may read and change: their own, or anyone's for an admin (else 403). */
function assertMayManage(principal: Principal, userId: string): string {
  const user = userId.toLowerCase()
  if (recipientOf(principal) === user || isAdmin(principal)) return user
  throw AppError.forbidden()
}

function setOf(
  records: readonly { type: NotificationType; inApp: boolean; realtime: boolean; email: boolean }[],
) {
  const set = Object.fromEntries(
    notificationTypes.map((type) => [type, { ...allOn }]),
  ) as NotificationPreferenceSet
  for (const { type, inApp, realtime, email } of records) set[type] = { inApp, realtime, email }
  return set
}

/** A token that does not verify, or names what this service never mails: 400, nothing changed. */
const badToken = () =>
  new AppError(400, ErrorCode.BAD_REQUEST, {
    message: 'This unsubscribe link is not valid',
    details: [{ field: 'token', message: 'is not a valid unsubscribe token' }],
  })

export function createPreferenceUseCases(preferences: PreferencesRepository, tokens: UnsubscribeTokens) {
  function verify(token: string): { userId: string; type: NotificationType } {
    const claim = tokens.verify(token)
    if (claim === undefined || !isNotificationType(claim.type)) throw badToken()
    return { userId: claim.userId, type: claim.type }
  }

  return {
    async get(userId: string, principal: Principal): Promise<NotificationPreferences> {
      const user = assertMayManage(principal, userId)
      return { userId: user, preferences: setOf(await preferences.ofUser(user)) }
    },

    /** Replaces the user's preferences: a type or channel left out is on. */
    async replace(
      userId: string,
      body: NotificationPreferencesBody,
      principal: Principal,
    ): Promise<NotificationPreferences> {
      const user = assertMayManage(principal, userId)
      const records = notificationTypes.map((type) => ({ type, ...allOn, ...body.preferences[type] }))
      await preferences.replace(user, records)
      return { userId: user, preferences: setOf(records) }
    },

    /** The token's user and type, when it verifies; 400 BAD_REQUEST (the error envelope) otherwise. */
    verify,

    /** One-click unsubscribe: e-mail of the token's type off for the token's user. */
    async unsubscribe(token: string): Promise<{ userId: string; type: NotificationType }> {
      const claim = verify(token)
      await preferences.turnEmailOff(claim.userId, claim.type)
      return claim
    },
  }
}

export type PreferenceUseCases = ReturnType<typeof createPreferenceUseCases>
