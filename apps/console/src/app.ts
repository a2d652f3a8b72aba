// The console's shell: signing in (the provider's redirect back, or the sign-in view), the navigation, one realtime
// client for the signed-in user, and the views by the URL's hash (#/orders, #/notifications).
import { createRealtimeClient, type RealtimeClient } from '@meridian/realtime-client'
import { type ConsoleConfig, loadConsoleConfig } from './config.ts'
import { completeOpenIdSignIn, type Session } from './session.ts'
import { errorBox, h, show } from './ui.ts'
import { notificationsView } from './views/notifications.ts'
import { ordersView } from './views/orders.ts'
import { completingView, signInView } from './views/sign-in.ts'

const routes = [
  { hash: '#/orders', label: 'Orders' },
  { hash: '#/notifications', label: 'Notifications' },
] as const

export async function startConsole(root: HTMLElement): Promise<void> {
  let config: ConsoleConfig
  try {
    config = await loadConsoleConfig()
  } catch (error) {
    show(root, errorBox(error))
    return
  }
  show(root, completingView())
  try {
    const session = await completeOpenIdSignIn()
    if (session) return signedIn(root, session, config)
  } catch (error) {
    show(
      root,
      signInView((session) => signedIn(root, session, config)),
      errorBox(error),
    )
    return
  }
  show(
    root,
    signInView((session) => signedIn(root, session, config)),
  )
}

function signedIn(root: HTMLElement, session: Session, config: ConsoleConfig): void {
  const realtime: RealtimeClient = createRealtimeClient({ url: location.origin, token: () => session.token })
  const notifications = notificationsView(session)
  const unread = h('span', { class: 'badge', 'aria-label': 'new notifications' })
  let current: { close(): void; refresh?(): void } | undefined

  const live = realtime.namespace('/notifications')
  live.on('notification:new', (notification) => {
    notifications.add(notification)
    current?.refresh?.()
    unread.textContent = String(Number(unread.textContent || 0) + 1)
  })

  const content = h('main', { id: 'content', tabindex: -1 })
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h(
      'ul',
      {},
      ...routes.map((route) =>
        h(
          'li',
          {},
          h('a', { href: route.hash }, route.label, route.hash === '#/notifications' ? unread : null),
        ),
      ),
    ),
  )
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out')
  signOut.addEventListener('click', () => {
    realtime.close()
    current?.close()
    window.removeEventListener('hashchange', route)
    location.hash = ''
    show(
      root,
      signInView((next) => signedIn(root, next, config)),
    )
  })

  function route(): void {
    current?.close()
    current = undefined
    const hash = routes.some((known) => known.hash === location.hash) ? location.hash : '#/orders'
    for (const link of nav.querySelectorAll('a')) {
      if (link.getAttribute('href') === hash) link.setAttribute('aria-current', 'page')
      else link.removeAttribute('aria-current')
    }
    if (hash === '#/notifications') {
      unread.textContent = ''
      show(content, notifications.element)
    } else {
      const orders = ordersView(session, config)
      current = orders
      show(content, orders.element)
    }
    content.focus()
  }

  window.addEventListener('hashchange', route)
  show(
    root,
    h(
      'header',
      {},
      h('strong', { class: 'brand' }, 'Meridian'),
      nav,
      h('span', { class: 'who' }, `${session.user.name || session.user.email} (${session.user.role})`),
      signOut,
    ),
    content,
  )
  route()
}
