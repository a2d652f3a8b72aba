// The notification service as /notifications reads it: the user's unread notifications and marking them read, over
// notification's REST API found in Consul, with the connected user's own credential (so notification decides what
// the user may see: PostgreSQL there is the source of truth; the channel only pushes).
import {
  AppError,
  type MarkNotificationsReadResult,
  type Notification,
  type RealtimeNotification,
  realtimeMessages,
} from '@meridian/contracts'
import { type DiscoveredUpstream, type UpstreamRequest, UpstreamStatusError } from '@meridian/service-kit'
import { forwardedHeaders, type SocketCredential } from './forwarded-credential.ts'

export interface NotificationsClient {
  /** the user's unread notifications, newest first (at most `limit`) */
  unread(credential: SocketCredential, limit?: number): Promise<RealtimeNotification[]>
  /** marks the user's own ids read; the ids actually theirs and read */
  markRead(credential: SocketCredential, notificationIds: string[]): Promise<string[]>
}

/** What of notification's page is read here. */
interface NotificationPage {
  data: Notification[]
}

/** The channel's record: the notification without readAt (spec: Real-time records). */
export const realtimeNotificationOf = ({
  id,
  type,
  title,
  message,
  createdAt,
}: Notification): RealtimeNotification => ({
  id,
  type,
  title,
  message,
  createdAt,
})

export function createNotificationsClient({
  upstream,
}: Pick<DiscoveredUpstream, 'upstream'>): NotificationsClient {
  /** A call with the user's credential; notification refusing that credential is the user's 401, not its failure. */
  async function call<Body>(credential: SocketCredential, request: UpstreamRequest): Promise<Body> {
    try {
      return (await upstream.request<Body>({ ...request, headers: forwardedHeaders(credential) })).body
    } catch (error) {
      // a session ended or a token revoked since the handshake
      if (
        error instanceof AppError &&
        error.cause instanceof UpstreamStatusError &&
        error.cause.status === 401
      ) {
        throw AppError.unauthorized(
          credential.kind === 'session' ? realtimeMessages.invalidSession : realtimeMessages.invalidToken,
        )
      }
      throw error
    }
  }

  return {
    async unread(credential, limit = 100) {
      const page = await call<NotificationPage>(credential, {
        method: 'GET',
        path: '/api/v1/notifications',
        query: { unread: true, limit },
      })
      return page.data.map(realtimeNotificationOf)
    },
    async markRead(credential, notificationIds) {
      const answer = await call<MarkNotificationsReadResult>(credential, {
        method: 'PATCH',
        path: '/api/v1/notifications',
        body: { notificationIds },
      })
      return answer.read
    },
  }
}
