// Notifications: the user's list (GET /api/v1/notifications), new ones arriving live on the realtime channel's
// /notifications namespace, and marking them read (PATCH /api/v1/notifications).
import type { Notification, RealtimeNotification } from '@meridian/contracts'
import { api } from '../api.ts'
import type { Session } from '../session.ts'
import { busy, errorBox, h, loading, panel, show, timeOf } from '../ui.ts'
import type { Route, View } from './view.ts'

interface Page<Item> {
  data: Item[]
}

export interface NotificationsView extends View {
  /** a notification:new of the channel */
  add(notification: RealtimeNotification): void
}

export function notificationsView(session: Session): NotificationsView {
  const list = h('ul', { class: 'notifications', 'aria-live': 'polite' })
  const body = h('div', {}, loading('your notifications'))
  const errors = h('div', { 'aria-live': 'assertive' })
  const shown = new Set<string>()

  function item(notification: RealtimeNotification | Notification): HTMLElement {
    const unread = !('readAt' in notification) || notification.readAt === null
    const markRead = h('button', { type: 'button', class: 'link' }, 'Mark read')
    const entry = h(
      'li',
      {
        'data-notification-id': notification.id,
        'data-type': notification.type,
        class: unread ? 'unread' : 'read',
      },
      h('strong', {}, notification.title),
      ' ',
      h('span', {}, notification.message),
      ' ',
      timeOf(notification.createdAt),
      unread ? markRead : null,
    )
    markRead.addEventListener('click', () => {
      void busy(markRead, errors, async () => {
        await api('PATCH', '/api/v1/notifications', {
          token: session.token,
          body: { notificationIds: [notification.id] },
        })
        entry.className = 'read'
        markRead.remove()
      })
    })
    return entry
  }

  async function read(): Promise<void> {
    try {
      const page = await api<Page<Notification>>('GET', '/api/v1/notifications?limit=50', {
        token: session.token,
      })
      for (const notification of page.data) {
        if (shown.has(notification.id)) continue
        shown.add(notification.id)
        list.append(item(notification))
      }
      show(body, list.childElementCount > 0 ? list : h('p', {}, 'No notifications yet.'))
    } catch (error) {
      show(body, errorBox(error))
    }
  }

  void read()
  return {
    element: panel('notifications', 'Notifications', body, errors),
    add(notification) {
      if (shown.has(notification.id)) return
      shown.add(notification.id)
      list.prepend(item(notification))
      show(body, list)
    },
  }
}

/**
 * The notifications view is made once per session (the shell keeps it, and adds what the channel brings to it even
 * while another view is shown); the route shows that one.
 */
const sessions = new WeakMap<Session, NotificationsView>()

export function notificationsOf(session: Session): NotificationsView {
  let view = sessions.get(session)
  if (!view) {
    view = notificationsView(session)
    sessions.set(session, view)
  }
  return view
}

export const notificationsRoute: Route = {
  hash: '#/notifications',
  label: 'Notifications',
  create: ({ session }) => ({ element: notificationsOf(session).element }),
}
