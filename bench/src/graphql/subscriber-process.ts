// bench:graphql's subscribers, in a process of their own (never the load generator's event loop): graphql-ws clients
// on `ws`, each its own connection with the credential in connection_init, subscribed to postCreated on instance 2.
// Each delivery's receive time is recorded by the post's sequence number (in its title); when every subscriber has a
// post, the parent is told (received-all). Told what to do by main.ts over IPC (subscriber-ipc.ts).
import { type Client, createClient } from 'graphql-ws'
import WebSocket from 'ws'
import { monotonicMs } from '../events/clock.ts'
import { answerParent, type ClientMessage } from '../realtime/client-ipc.ts'
import { seqOfTitle } from './figures.ts'
import type { ReceiptsReply, SubscribeReply, SubscribeRequest, SubscriberRequest } from './subscriber-ipc.ts'

if (!process.send) throw new Error('the subscriber process is started by bench/src/graphql/main.ts, over IPC')
const send = (message: ClientMessage) => process.send?.(message)

const clients: Client[] = []
const receipts = new Map<number, number[]>()
const errors: Record<string, number> = {}
let listening = 0
let payloadBytes = 0

const tally = (error: unknown) => {
  const message = error instanceof Error ? error.message : (JSON.stringify(error) ?? String(error))
  const key = message.slice(0, 300)
  errors[key] = (errors[key] ?? 0) + 1
}

type Delivery = { data?: { postCreated?: { title?: unknown } } | null }

function received(result: Delivery): void {
  const at = monotonicMs()
  const title = result.data?.postCreated?.title
  const seq = typeof title === 'string' ? seqOfTitle(title) : undefined
  if (seq === undefined) {
    tally(new Error(`a delivery without a bench title: ${JSON.stringify(result)}`))
    return
  }
  if (payloadBytes === 0) payloadBytes = Buffer.byteLength(JSON.stringify(result))
  const times = receipts.get(seq) ?? []
  if (times.length === 0) receipts.set(seq, times)
  times.push(at)
  if (times.length === listening) send({ type: 'received-all', seq })
}

/** One client: connected (connection_ack) or failed within 30 s; then subscribed. */
function subscribeOne(request: SubscribeRequest): Promise<Client> {
  const client = createClient({
    url: request.url,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: { authorization: request.authorization },
    onNonLazyError: () => undefined,
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('no connection_ack within 30 s')), 30_000)
    const stopConnected = client.on('connected', () => {
      done()
      client.subscribe<Delivery['data']>(
        { query: request.query },
        { next: (result) => received(result as Delivery), error: tally, complete: () => undefined },
      )
      resolve(client)
    })
    const stopClosed = client.on('closed', (event) =>
      fail(new Error(`closed: ${(event as { code?: number }).code}`)),
    )
    function done() {
      clearTimeout(timer)
      stopConnected()
      stopClosed()
    }
    function fail(error: Error) {
      done()
      void client.dispose()
      reject(error)
    }
  })
}

async function subscribe(request: SubscribeRequest): Promise<SubscribeReply> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: request.count }, () => subscribeOne(request)),
  )
  const failures: Record<string, number> = {}
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') clients.push(outcome.value)
    else {
      const key = String(outcome.reason instanceof Error ? outcome.reason.message : outcome.reason)
      failures[key] = (failures[key] ?? 0) + 1
    }
  }
  listening = clients.length
  return { connected: clients.length, failed: request.count - clients.length, errors: failures }
}

async function handle(command: SubscriberRequest): Promise<unknown> {
  switch (command.type) {
    case 'subscribe':
      return subscribe(command)
    case 'receipts':
      return { receipts: Object.fromEntries(receipts), payloadBytes, errors } satisfies ReceiptsReply
    case 'disconnect':
      await Promise.all(clients.map((client) => client.dispose()))
      clients.length = 0
      return {}
  }
}

answerParent<SubscriberRequest & { id: number }>(handle)
