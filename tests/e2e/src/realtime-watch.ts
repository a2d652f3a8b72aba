// Realtime clients that stay connected through a fault campaign: each a customer on /notifications through one of the
// gateways, with the SDK (socket.io-client, WebSocket transport). Each counts its disconnections, reconnections and
// resyncs, and what it has seen: every notification:new heard live, and on a resync (a reconnection that could not
// recover the session) the customer's list fetched again over REST, as the SDK's documentation tells a client to.
// After a fault, `missed()` is what the notification service holds for the customer that the client never saw.
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
    seen,
    get lastError() {
      return lastError
    },
    close: () => client.close(),
  }
}
