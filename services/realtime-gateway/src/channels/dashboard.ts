// /dashboard (spec: Real-time events): metrics:snapshot on connect, then metrics:update every interval with the
// metrics each socket chose (dashboard:subscribe; all four by default) and the timestamp.
//
// Each instance samples for its own sockets: one loop, running only while at least one socket is connected here, one
// sample per tick sent to every local socket (namespace.local: another instance's loop serves its own sockets, so the
// adapter must not carry updates across). Sockets with the same choice share a room, `dashboard:{sorted names}`, so
// a tick encodes one packet per choice rather than one per socket.
import {
  type DashboardMetricName,
  type DashboardMetrics,
  DashboardSubscribe,
  dashboardMetricNames,
  realtimeMessages,
  realtimeScopes,
} from '@meridian/contracts'
import { holdsRole } from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import { type ChannelNamespace, type ChannelSocket, ClientEvents } from './channel.ts'

export interface DashboardFiguresSource {
  sample(): Promise<Omit<DashboardMetrics, 'activeUsers' | 'timestamp'>>
  /** called when the channel closes: the channel owns its source */
  close?(): Promise<void>
}

export interface DashboardChannelDeps {
  source: DashboardFiguresSource
  /** distinct users connected to the channel, across instances */
  activeUsers: () => Promise<number>
  /** metrics:update interval, ms (DASHBOARD_INTERVAL_MS) */
  intervalMs: number
  log: FastifyBaseLogger
}

/** A full metrics record: what a sample gives, before each socket's choice is applied. */
type Figures = DashboardMetrics

const roomOf = (names: readonly DashboardMetricName[]) => `dashboard:${[...names].sort().join(',')}`

/** The record with only `names` (and the timestamp). */
function chosen(figures: Figures, names: readonly DashboardMetricName[]): DashboardMetrics {
  const record: DashboardMetrics = { timestamp: figures.timestamp }
  for (const name of names) {
    const value = figures[name]
    if (value !== undefined) record[name] = value
  }
  return record
}

export function dashboardChannel(
  namespace: ChannelNamespace<'/dashboard'>,
  deps: DashboardChannelDeps,
): { close(): Promise<void> } {
  const { source, log, intervalMs } = deps
  /** each local socket's choice */
  const choices = new Map<ChannelSocket<'/dashboard'>, readonly DashboardMetricName[]>()
  let timer: NodeJS.Timeout | undefined
  /** the sample being taken, shared by a tick and the snapshots asked meanwhile */
  let sampling: Promise<Figures> | undefined
  /** the latest sample of the running loop (none while nobody watches: it would be stale when someone comes back) */
  let latest: Figures | undefined
  let failing = false
  let closed = false

  // Who may watch: the dashboard shows the operational figures of the whole system (traffic, errors, latency, how
  // many users are online), which the spec does not give to every user; like /admin, only admins connect. The
  // handshake has already put the verified user on socket.data.
  namespace.use((socket, next) => {
    const user = socket.data.user
    next(user && holdsRole(user.principal, ['admin']) ? undefined : new Error(realtimeMessages.unauthorized))
  })

  async function takeSample(): Promise<Figures> {
    const [traffic, users] = await Promise.allSettled([source.sample(), deps.activeUsers()])
    if (traffic.status === 'rejected' || users.status === 'rejected') {
      if (!failing) {
        log.warn(
          {
            err: traffic.status === 'rejected' ? traffic.reason : (users as PromiseRejectedResult).reason,
          },
          'dashboard: figures missing from the updates until the source answers again',
        )
      }
      failing = true
    } else if (failing) {
      failing = false
      log.info('dashboard: figures complete again')
    }
    // what could not be measured is left out of the record rather than shown as 0
    return {
      ...(traffic.status === 'fulfilled' ? traffic.value : {}),
      ...(users.status === 'fulfilled' ? { activeUsers: users.value } : {}),
      timestamp: Date.now(),
    }
  }

  /** The sample in progress, or a new one. */
  function currentSample(): Promise<Figures> {
    sampling ??= takeSample().finally(() => {
      sampling = undefined
    })
    return sampling
  }

  function tick(): void {
    if (sampling) return // the previous sample is still being taken: this tick is skipped, not queued
    void currentSample().then((figures) => {
      if (timer === undefined) return // everyone left (or closed) meanwhile
      latest = figures
      const rooms = new Map<string, readonly DashboardMetricName[]>()
      for (const names of choices.values()) rooms.set(roomOf(names), names)
      for (const [room, names] of rooms) {
        namespace.local.to(room).emit('metrics:update', chosen(figures, names))
      }
    })
  }

  function watch(socket: ChannelSocket<'/dashboard'>, names: readonly DashboardMetricName[]): void {
    const previous = choices.get(socket)
    if (previous) void socket.leave(roomOf(previous))
    choices.set(socket, names)
    void socket.join(roomOf(names))
  }

  const events = new ClientEvents<ChannelSocket<'/dashboard'>>(
    log,
    realtimeScopes.namespaces['/dashboard'].events,
  ).on('dashboard:subscribe', DashboardSubscribe, (socket, { metrics }) => {
    watch(socket, metrics)
    return { metrics }
  })
  function forget(this: ChannelSocket<'/dashboard'>): void {
    choices.delete(this)
    if (choices.size === 0) stopLoop()
  }

  namespace.on('connection', (socket) => {
    if (closed) {
      socket.disconnect(true)
      return
    }
    watch(socket, dashboardMetricNames)
    if (timer === undefined) timer = setInterval(tick, intervalMs)

    events.attach(socket)
    socket.on('disconnect', forget)

    // the latest figures of the running loop, else a sample taken now
    const snapshot = latest ? Promise.resolve(latest) : currentSample()
    void snapshot.then((figures) => {
      if (socket.connected) socket.emit('metrics:snapshot', figures)
    })
  })

  function stopLoop(): void {
    clearInterval(timer)
    timer = undefined
    latest = undefined
  }

  return {
    async close() {
      closed = true
      stopLoop()
      choices.clear()
      await sampling?.catch(() => {})
      await source.close?.()
    },
  }
}
