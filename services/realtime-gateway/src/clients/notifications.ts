// The notification service as /notifications reads it: the user's unread notifications and marking them read, over
// notification's REST API found in Consul, with the connected user's own credential (so notification decides what
// the user may see: PostgreSQL there is the source of truth; the channel only pushes).
import type { MarkNotificationsReadResult, Notification, RealtimeNotification } from '@meridian/contracts'
import type { DiscoveredUpstream } from '@meridian/service-kit'
import { forwardedHeaders, type SocketCredential } from '../channels/channel.ts'

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
  return {
    async unread(credential, limit = 100) {
      const { body } = await upstream.request<NotificationPage>({
        method: 'GET',
        path: '/api/v1/notifications',
        query: { unread: true, limit },
        headers: forwardedHeaders(credential),
      })
      return body.data.map(realtimeNotificationOf)
    },
    async markRead(credential, notificationIds) {
      const { body } = await upstream.request<MarkNotificationsReadResult>({
        method: 'PATCH',
        path: '/api/v1/notifications',
        body: { notificationIds },
        headers: forwardedHeaders(credential),
      })
      return body.read
    },
  }
}
