// A TypeScript project's use of the tarball's types: namespaces, events and payloads are typed, and mistakes are not.
import {
  type ChatMessage,
  createRealtimeClient,
  type DashboardMetricName,
  RealtimeRequestError,
  request,
} from '@meridian/realtime-client'

const client = createRealtimeClient({ url: 'http://127.0.0.1:8080', token: () => 'token' })
const chat = client.namespace('/chat')
chat.on('chat:message', (message: ChatMessage) => message.text.toUpperCase())

export async function join(roomId: string): Promise<number> {
  const { history, online } = await request(chat, 'chat:join', { roomId })
  return history.messages.length + online.length
}

export async function subscribe(): Promise<DashboardMetricName[]> {
  const { metrics } = await request(client.namespace('/dashboard'), 'dashboard:subscribe', {
    metrics: ['activeUsers', 'p95Latency'],
  })
  return metrics
}

export const isNotFound = (error: unknown) =>
  error instanceof RealtimeRequestError && error.code === 'NOT_FOUND'

// @ts-expect-error: collab:init is not an event of /chat
chat.on('collab:init', () => {})
// @ts-expect-error: chat:join needs a roomId
void request(chat, 'chat:join', {})
// @ts-expect-error: cpu is not a dashboard metric
void request(client.namespace('/dashboard'), 'dashboard:subscribe', { metrics: ['cpu'] })
// @ts-expect-error: there is no such namespace
client.namespace('/nowhere')
