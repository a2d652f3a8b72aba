// What every view of the console is given, and what it gives back to the shell.
import type { RealtimeClient } from '@meridian/realtime-client'
import type { ConsoleConfig } from '../config.ts'
import type { Session } from '../session.ts'

/** Shared by every view of a signed-in user: who, where, and the one realtime client of the page. */
export interface ViewContext {
  session: Session
  config: ConsoleConfig
  realtime: RealtimeClient
}

export interface View {
  element: HTMLElement
  /** something changed elsewhere (one of the user's notifications arrived): read again what may have moved */
  refresh?(): void
  /** the user left the view: stop timers and listeners */
  close?(): void
}

/** A view of the navigation: its hash (#/…), its label, who may see it, and how it is made. */
export interface Route {
  hash: string
  /** older hashes that open it too */
  aliases?: readonly string[]
  label: string
  adminOnly?: boolean
  create(context: ViewContext): View
}

export const isAdmin = (session: Session): boolean => session.user.role === 'admin'
