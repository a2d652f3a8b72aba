// What the e-mail tests share: an event applied by the consumer of its type in a transaction of its own (as the
// runner applies it, so a second call is a redelivery the inbox forgot), a notification's mail row, a port nothing
// listens on, and a TCP relay that starts listening on such a port later (the SMTP server "comes back").
import { connect, createServer, type Server, type Socket } from 'node:net'
import { transaction } from '@meridian/db'
import type { CatalogueEvent } from '@meridian/events'
import { type NotificationEventType, notificationConsumers } from '../../src/events/consumers.ts'
import type { NotificationTestApp } from './app.ts'

/** A port on 127.0.0.1 that nothing listens on (testkit's). */
export { closedPort } from '@meridian/testkit'

const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }

export async function handle(
  notification: NotificationTestApp,
  event: CatalogueEvent<NotificationEventType>,
): Promise<void> {
  const each = notificationConsumers(notification.consumerUseCases).find(
    (candidate) => candidate.type === event.type,
  )
  if (!each) throw new Error(`no consumer of ${event.type}`)
  await transaction(notification.sql, (tx) =>
    (each.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
  )
}

export interface DeliveryRow {
  notificationId: string
  userId: string
  status: 'pending' | 'sent' | 'dead'
  attempts: number
  lastError: string | null
  messageId: string | null
  nextAttemptAt: Date
}

/** The mail rows of a user's notifications, oldest notification first. */
export function deliveriesOf(notification: NotificationTestApp, userId: string): Promise<DeliveryRow[]> {
  return notification.sql<DeliveryRow[]>`
    select d.notification_id, d.user_id, d.status, d.attempts, d.last_error, d.message_id, d.next_attempt_at
    from email_deliveries d join notifications n on n.id = d.notification_id
    where d.user_id = ${userId} order by n.created_at, n.id`
}

/** Relays connections to `port` on 127.0.0.1 to `target`, from now until stopped. */
export async function relay(
  port: number,
  target: { host: string; port: number },
): Promise<() => Promise<void>> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
}
