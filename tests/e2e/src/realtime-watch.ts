// Realtime clients that stay connected through a fault campaign: each a customer on /notifications through one of the
// gateways, with the SDK (socket.io-client, WebSocket transport). Each counts its disconnections, reconnections and
// resyncs, and what it has seen: every notification:new heard live, and on a resync (a reconnection that could not
// recover the session) the customer's list fetched again over REST, as the SDK's documentation tells a client to.
// After a fault, eventuallyMissed is what the notification service holds for the customers that their clients never
// saw. An `auth:failed` from the server is a forced sign-in: the user's credential was refused, they must sign in again.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql } from '@meridian/db'
import { createRealtimeClient, type RealtimeClient } from '@meridian/realtime-client'
import type { Customer } from './client.ts'

export interface RealtimeWatch {
  customer: Customer
  gatewayUrl: string
  readonly connected: boolean
  /** times the /notifications socket lost its connection */
  readonly disconnects: number
  /** connections after the first */
  readonly reconnects: number
  /** reconnections without the session recovered (the list fetched again) */
  readonly resyncs: number
  /** times the server refused the client's credential (auth:failed): each would send the user to sign in again */
  readonly authFailures: number
  /** notification ids seen live or fetched after a resync */
  readonly seen: ReadonlySet<string>
  /** the last reason a connection attempt failed, if one did */
  readonly lastError: string | undefined
  close(): void
}

/** GET /api/v1/notifications: the customer's newest 100 (the campaign's customers get fewer per fault). */
async function fetchList(gatewayUrl: string, customer: Customer): Promise<string[]> {
  const response = await fetch(`${gatewayUrl}/api/v1/notifications?limit=100`, {
    headers: { authorization: `Bearer ${customer.token}` },
    signal: AbortSignal.timeout(10_000),
  })
  if (response.status !== 200) throw new Error(`GET /api/v1/notifications answered ${response.status}`)
  const body = (await response.json()) as { data: { id: string }[] }
  return body.data.map((each) => each.id)
}

export function watchRealtime(gatewayUrl: string, customer: Customer): RealtimeWatch {
  const seen = new Set<string>()
  let connected = false
  let everConnected = false
  let disconnects = 0
  let reconnects = 0
  let resyncs = 0
  let authFailures = 0
  let lastError: string | undefined
  const client: RealtimeClient = createRealtimeClient({
    url: gatewayUrl,
    token: () => customer.token,
    // a host may be down for a while: keep trying, quickly
    reconnection: { attempts: 1000, initialDelayMs: 200, maxDelayMs: 1000, randomizationFactor: 0.5 },
  })
  const socket = client.namespace('/notifications')
  socket.on('notification:new', (notification) => seen.add(notification.id))
  client.on('connect', () => {
    connected = true
    if (everConnected) reconnects += 1
    everConnected = true
  })
  client.on('connect_error', (_namespace, error) => {
    lastError = error.message
  })
  client.on('auth:failed', (_namespace, failure) => {
    authFailures += 1
    lastError = `auth:failed ${JSON.stringify(failure)}`
  })
  client.on('disconnect', () => {
    connected = false
    disconnects += 1
  })
  const resync = async (attempt = 1): Promise<void> => {
    try {
      for (const id of await fetchList(gatewayUrl, customer)) seen.add(id)
    } catch {
      // the gateway may still be coming back: try again shortly, a few times
      if (attempt < 20) setTimeout(() => void resync(attempt + 1), 500).unref()
    }
  }
  client.on('resync', () => {
    resyncs += 1
    void resync()
  })
  return {
    customer,
    gatewayUrl,
    get connected() {
      return connected
    },
    get disconnects() {
      return disconnects
    },
    get reconnects() {
      return reconnects
    },
    get resyncs() {
      return resyncs
    },
    get authFailures() {
      return authFailures
    },
    seen,
    get lastError() {
      return lastError
    },
    close: () => client.close(),
  }
}

/** What the notification service holds for the watched customers since `since` that their clients never saw. */
async function missedNotifications(
  notifications: Sql,
  watches: RealtimeWatch[],
  since: Date,
  say: (line: string) => void,
): Promise<number> {
  let missed = 0
  for (const watch of watches) {
    const rows = await notifications<{ id: string }[]>`
      select id::text from notifications where user_id = ${watch.customer.id} and created_at >= ${since}`
    const mine = rows.filter((row) => !watch.seen.has(row.id)).length
    if (mine > 0)
      say(
        `a realtime client on ${watch.gatewayUrl} has not seen ${mine} of ${rows.length} notifications (connected: ${watch.connected}, disconnects ${watch.disconnects}, reconnects ${watch.reconnects}, resyncs ${watch.resyncs}, last error ${watch.lastError ?? 'none'})`,
      )
    missed += mine
  }
  return missed
}

/** missedNotifications, asked again for up to 20 s while it is not 0: the last pushes may still be on their way. */
export async function eventuallyMissed(
  notifications: Sql,
  watches: RealtimeWatch[],
  since: Date,
  say: (line: string) => void,
): Promise<number> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const missed = await missedNotifications(notifications, watches, since, say)
    if (missed === 0 || Date.now() > deadline) return missed
    await sleep(1000)
  }
}
