// The console's views, in the navigation's order: each a hash, a label, and whether only admins see it; and the pages a
// visitor reaches without signing in (a forgotten password), which the shell shows in place of the sign-in page.
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
import { sagasView } from './views/sagas.ts'
import { servicesView } from './views/services.ts'
import type { Route } from './views/view.ts'

export const routes: Route[] = [
  { hash: '#/orders', label: 'Orders', create: ordersView },
  notificationsRoute,
  { hash: '#/documents', label: 'Documents', create: documentsView },
  { hash: '#/chat', label: 'Chat', create: chatView },
  { hash: '#/posts', label: 'Posts', create: postsView },
  { hash: '#/account', label: 'Account', create: accountView },
  { hash: '#/services', label: 'Services', adminOnly: true, create: servicesView },
  { hash: '#/dashboard', label: 'Dashboard', adminOnly: true, create: dashboardView },
  { hash: '#/sagas', label: 'Sagas', adminOnly: true, create: sagasView },
  { hash: '#/dead-letters', label: 'Dead letters', adminOnly: true, create: deadLettersView },
  { hash: '#/audit', label: 'Audit', adminOnly: true, create: auditView },
]

/** The page of the hash for a visitor who is not signed in (#/forgot-password, #/reset-password/<token>), if any. */
export const visitorPageOf = (hash: string): HTMLElement | undefined => passwordPageOf(hash)
