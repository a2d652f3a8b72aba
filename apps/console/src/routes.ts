// The console's views, in the navigation's order: each a hash, a label, and whether only admins see it; the pages a
// visitor reaches without signing in (a forgotten password, a mailed link proving an address), which the shell shows in
// place of the sign-in page; and the mailed link's page a signed-in user may open too.
import { accountView } from './views/account.ts'
import { auditView } from './views/audit.ts'
import { chatView } from './views/chat.ts'
import { dashboardView } from './views/dashboard.ts'
import { deadLettersView } from './views/dead-letters.ts'
import { documentsView } from './views/documents.ts'
import { notificationsRoute } from './views/notifications.ts'
import { ordersView } from './views/orders.ts'
import { passwordPageOf } from './views/password-reset.ts'
import { postsView } from './views/posts.ts'
import { processesView } from './views/processes.ts'
import { servicesView } from './views/services.ts'
import { accountOnward, signInOnward, verifyPageOf } from './views/verify-email.ts'
import type { Route, View } from './views/view.ts'

export const routes: Route[] = [
  { hash: '#/orders', label: 'Orders', create: ordersView },
  notificationsRoute,
  { hash: '#/documents', label: 'Documents', create: documentsView },
  { hash: '#/chat', label: 'Chat', create: chatView },
  { hash: '#/posts', label: 'Posts', create: postsView },
  { hash: '#/account', label: 'Account', create: accountView },
  { hash: '#/services', label: 'Services', adminOnly: true, create: servicesView },
  { hash: '#/dashboard', label: 'Dashboard', adminOnly: true, create: dashboardView },
  // #/sagas: the view's name before it showed every process type (bookmarks keep working)
  { hash: '#/processes', aliases: ['#/sagas'], label: 'Processes', adminOnly: true, create: processesView },
  { hash: '#/dead-letters', label: 'Dead letters', adminOnly: true, create: deadLettersView },
  { hash: '#/audit', label: 'Audit', adminOnly: true, create: auditView },
]

/**
 * The page of the hash for a visitor who is not signed in (#/forgot-password, #/reset-password/<token>,
 * #/verify-email/<token>, which then leads to signing in), if any.
 */
export const visitorPageOf = (hash: string): HTMLElement | undefined =>
  passwordPageOf(hash) ?? verifyPageOf(hash, signInOnward)

/** For a signed-in user, the page of a mailed link opened in the same tab (#/verify-email/<token>), if it is one. */
export function signedInPageOf(hash: string): View | undefined {
  const element = verifyPageOf(hash, accountOnward)
  return element && { element }
}
