// An event a consumer can never take, written straight to the run's topic: the realtime channel's consumer parks it
// in notification.created.dlt at once (its data lacks title, message and createdAt), as it would any such event.
import { randomUUID } from 'node:crypto'
import { kafkaClientOfEnv } from '@meridian/infra'
import type { E2eSystem } from './system-context.ts'

/** Sends one notification.created the realtime channel refuses, with `headers` beside its message id; its ids. */
export async function sendUnacceptableNotification(
  kafka: E2eSystem['kafka'],
  headers: Record<string, string> = {},
): Promise<{ eventId: string; userId: string }> {
  const eventId = randomUUID()
  const userId = randomUUID()
  const producer = kafkaClientOfEnv(kafka.env, 'e2e-dead-letters').producer()
  await producer.connect()
  try {
    await producer.send({
      topic: `${kafka.namespace}notification.created`,
      messages: [
        {
          key: userId,
          value: JSON.stringify({
            id: eventId,
            type: 'notification.created',
            source: 'e2e',
            schemaVersion: '1.0.0',
            timestamp: new Date().toISOString(),
            data: { notificationId: randomUUID(), userId, type: 'welcome' },
          }),
          headers: { 'message-id': eventId, ...headers },
        },
      ],
    })
  } finally {
    await producer.disconnect()
  }
  return { eventId, userId }
}
