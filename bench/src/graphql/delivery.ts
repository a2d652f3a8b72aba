// bench:graphql part B: postCreated across two instances of one server kind. The subscribers (a process of their own)
// listen on instance 2; the bench sends createPost to instance 1 at a fixed rate, open loop, for the warm-up and then
// the measured seconds, each post's title carrying its sequence number. Latency is a subscriber's receive time minus
// the moment the mutation was sent, both on monotonicMs() (CLOCK_MONOTONIC, one clock for every process).
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { monotonicMs } from '../events/clock.ts'
import type { ServerName } from '../ipc.ts'
import { atFixedRate } from '../open-loop.ts'
import { type ClientProcess, startClientProcess } from '../realtime/client-pool.ts'
import type { ServerProcess } from '../server-process.ts'
import { type DeliveryResult, deliveryFigures, postTitle, type SentPost } from './figures.ts'
import type { ReceiptsReply, SubscribeReply, SubscriberRequest } from './subscriber-ipc.ts'

const subscriberEntry = fileURLToPath(new URL('./subscriber-process.ts', import.meta.url))

export const postCreatedSubscription = 'subscription { postCreated { id title author { name } } }'
const createPostMutation =
  'mutation ($title: String!, $content: String!, $authorId: ID!) ' +
  '{ createPost(title: $title, content: $content, authorId: $authorId) { id } }'

export interface DeliverySettings {
  ratePerSecond: number
  warmupSeconds: number
  measureSeconds: number
  subscribers: number
  drainMs: number
  /** the bearer credential of `authorId`, for the mutations and the subscriptions' connection_init */
  authorization: string
  authorId: string
  inheritedEnv: NodeJS.ProcessEnv
}

export interface DeliveryRun {
  /** the subscriber process, once started: the caller records its pid to stop it however the run ends */
  onSubscriberProcess(process: ClientProcess<SubscriberRequest>): void
  say(message: string): void
}

/** Sends createPost to instance 1; resolves with 'accepted' (200, an id, no errors) or what came instead. */
async function sendPost(pool: Pool, settings: DeliverySettings, seq: number): Promise<string> {
  const answer = await pool.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: settings.authorization },
    body: JSON.stringify({
      query: createPostMutation,
      variables: {
        title: postTitle(seq),
        content: `Delivered to every subscriber (${seq}).`,
        authorId: settings.authorId,
      },
    }),
  })
  const body = (await answer.body.json()) as { data?: { createPost?: { id?: string } }; errors?: unknown }
  if (answer.statusCode === 200 && body.errors === undefined && typeof body.data?.createPost?.id === 'string')
    return 'accepted'
  return body.errors === undefined ? String(answer.statusCode) : `${answer.statusCode} with errors`
}

export async function measureDelivery(
  server: ServerName,
  [first, second]: [ServerProcess<string>, ServerProcess<string>],
  settings: DeliverySettings,
  { onSubscriberProcess, say }: DeliveryRun,
): Promise<DeliveryResult> {
  const subscribers = await startClientProcess<SubscriberRequest>(
    `${server} subscribers`,
    { ...settings.inheritedEnv, NODE_ENV: 'production' },
    subscriberEntry,
  )
  onSubscriberProcess(subscribers)
  const fullyReceived = new Set<number>()
  subscribers.onReceivedAll((seq) => fullyReceived.add(seq))

  const subscribed = await subscribers.ask<SubscribeReply>({
    type: 'subscribe',
    url: `${second.baseUrl.replace(/^http/, 'ws')}/graphql`,
    count: settings.subscribers,
    authorization: settings.authorization,
    query: postCreatedSubscription,
  })
  for (const [message, n] of Object.entries(subscribed.errors))
    say(`${server}: ${n} subscribers failed: ${message}`)
  if (subscribed.connected === 0) throw new Error(`${server}: no subscriber connected to instance 2`)

  const pool = new Pool(first.baseUrl, { connections: 32, keepAliveTimeout: 30_000 })
  try {
    // a subscription has no acknowledgement: probes until one reaches every subscriber (through Redis, so instance
    // 2 has subscribed its channel too)
    const probes: number[] = []
    const probesUntil = monotonicMs() + 15_000
    for (let probe = -1; !probes.some((seq) => fullyReceived.has(seq)); probe -= 1) {
      if (monotonicMs() > probesUntil)
        throw new Error(`${server}: no probe post reached every subscriber in 15 s`)
      probes.push(probe)
      await sendPost(pool, settings, probe).catch(() => 'failed')
      await new Promise((resolve) => setTimeout(resolve, 200))
    }

    const warmupPosts = settings.ratePerSecond * settings.warmupSeconds
    const total = warmupPosts + settings.ratePerSecond * settings.measureSeconds
    say(
      `${server}: ${subscribed.connected} subscribers on instance 2; ${settings.ratePerSecond} createPost/s to ` +
        `instance 1 for ${settings.warmupSeconds} s of warm-up, then ${settings.measureSeconds} s measured`,
    )
    const measured: SentPost[] = []
    const refused: Record<string, number> = {}
    const { lagMs } = await atFixedRate(total, settings.ratePerSecond, async (seq) => {
      const post: SentPost = { seq, sentAt: monotonicMs(), accepted: false }
      if (seq >= warmupPosts) measured.push(post)
      const outcome = await sendPost(pool, settings, seq).catch((error: unknown) =>
        error instanceof Error ? error.name : 'error',
      )
      post.accepted = outcome === 'accepted'
      if (!post.accepted && seq >= warmupPosts) refused[outcome] = (refused[outcome] ?? 0) + 1
      post.answerMs = monotonicMs() - post.sentAt
    })

    // the deliveries still on their way
    const drainUntil = monotonicMs() + settings.drainMs
    while (
      monotonicMs() < drainUntil &&
      measured.some((post) => post.accepted && !fullyReceived.has(post.seq))
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const receipts = await subscribers.ask<ReceiptsReply>({ type: 'receipts' })
    for (const [message, n] of Object.entries(receipts.errors))
      say(`${server}: ${n} x subscription error: ${message}`)
    await subscribers.ask({ type: 'disconnect' })
    return {
      server,
      ratePerSecond: settings.ratePerSecond,
      seconds: settings.measureSeconds,
      subscribers: subscribed.connected,
      refused,
      subscriptionErrors: receipts.errors,
      lagMs,
      payloadBytes: receipts.payloadBytes,
      ...deliveryFigures(measured, receipts.receipts, subscribed.connected),
    }
  } finally {
    await pool.close()
    await subscribers.stop()
  }
}
