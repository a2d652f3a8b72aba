// The console's shell: signing in (the provider's redirect back, or the sign-in view, or a page a visitor reaches
// without signing in), the navigation, one realtime client for the signed-in user, and the views by the URL's hash
// (routes.ts), or a mailed link's page that a signed-in user opens in the same tab.
import { createRealtimeClient } from '@meridian/realtime-client'
import { type ConsoleConfig, loadConsoleConfig } from './config.ts'
import { routes, signedInPageOf, visitorPageOf } from './routes.ts'
import { completeOpenIdSignIn, type Session } from './session.ts'
import { errorBox, h, show } from './ui.ts'
import { notificationsOf } from './views/notifications.ts'
import { completingView, signInView } from './views/sign-in.ts'
import { isAdmin, type View, type ViewContext } from './views/view.ts'

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
    return signedOut(root, config, error)
  }
  signedOut(root, config)
}

/**
 * A visitor who is not signed in: the page of the hash they reach without signing in (a forgotten password: the
 * reset mail's link opens one; an address to confirm: the verification mail's link), else the sign-in page, with the failure that brought them there if any; followed
 * as the hash changes, until they sign in.
 */
function signedOut(root: HTMLElement, config: ConsoleConfig, failure?: unknown): void {
  function page(): void {
    const shown = visitorPageOf(location.hash) ?? signInView(onSignedIn, config.signInHint)
    show(root, shown, failure === undefined ? null : errorBox(failure))
    failure = undefined
  }
  function onSignedIn(session: Session): void {
    window.removeEventListener('hashchange', page)
    signedIn(root, session, config)
  }
  window.addEventListener('hashchange', page)
  page()
}

function signedIn(root: HTMLElement, session: Session, config: ConsoleConfig): void {
  const realtime = createRealtimeClient({ url: location.origin, token: () => session.token })
  const context: ViewContext = { session, config, realtime }
  const visible = routes.filter((route) => !route.adminOnly || isAdmin(session))
  const notifications = notificationsOf(session)
  const unread = h('span', { class: 'badge', 'aria-label': 'new notifications' })
  let current: View | undefined

  realtime.namespace('/notifications').on('notification:new', (notification) => {
    notifications.add(notification)
    current?.refresh?.()
    if (location.hash !== '#/notifications') unread.textContent = String(Number(unread.textContent || 0) + 1)
  })

  const content = h('main', { id: 'content', tabindex: -1 })
  const nav = h(
    'nav',
    { 'aria-label': 'Console' },
    h(
      'ul',
      {},
      ...visible.map((route) =>
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
    current?.close?.()
    window.removeEventListener('hashchange', route)
    location.hash = ''
    signedOut(root, config)
  })

  function route(): void {
    current?.close?.()
    // a mailed link's page (an address to confirm) opened in this tab is no view of the navigation
    const linked = signedInPageOf(location.hash)
    const chosen =
      visible.find((known) => known.hash === location.hash || known.aliases?.includes(location.hash)) ??
      visible[0]!
    const here = linked ? undefined : chosen.hash
    for (const link of nav.querySelectorAll('a')) {
      if (link.getAttribute('href') === here) link.setAttribute('aria-current', 'page')
      else link.removeAttribute('aria-current')
    }
    if (here === '#/notifications') unread.textContent = ''
    current = linked ?? chosen.create(context)
    show(content, current.element)
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
