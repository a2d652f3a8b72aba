// One trace per order, read back from the trace store (Jaeger's query API): the order placed through the gateway with
// a traceparent the test chose, then paid, reserved, shipped, notified and pushed to the customer's live client — one
// trace, every hop parented across Kafka, in causal order; a declined card's and an out-of-stock order's
// compensations in their traces; and an event dead-lettered by its consumer, visible in the trace it came with.
import { setTimeout as sleep } from 'node:timers/promises'
import type { RealtimeNotification } from '@meridian/contracts'
import { createRealtimeClient, type RealtimeClient } from '@meridian/realtime-client'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient } from '../src/client.ts'
import { sendUnacceptableNotification } from '../src/dead-letters.ts'
import {
  ancestry,
  newTraceparent,
  servicePath,
  type Trace,
  type TraceSpan,
  traceWhere,
} from '../src/traces.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)
const { queryUrl } = system.traces
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)
const clients: RealtimeClient[] = []

/** `expected` appears in `path` in this order (other services may come between: the saga returns to order). */
function isSubsequence(expected: string[], path: string[]): boolean {
  let at = 0
  for (const service of path) if (service === expected[at]) at += 1
  return at === expected.length
}

/**
 * Every span's parent is in the trace, but for the client's own span (which no store has: the test made it up):
 * no hop lost its parent on the way.
 */
const orphans = (trace: Trace, clientSpanId: string) => {
  const ids = new Set(trace.spans.map((span) => span.spanId))
  return trace.spans.filter(
    (span) => span.parentId !== undefined && span.parentId !== clientSpanId && !ids.has(span.parentId),
  )
}
/** The spans the trace starts with in the system: children of the client's span, or roots. */
const roots = (trace: Trace, clientSpanId: string) =>
  trace.spans.filter((span) => span.parentId === undefined || span.parentId === clientSpanId)

/** The first span whose chain up to the root passes through `services` in this order. */
function spanThrough(trace: Trace, services: string[]): TraceSpan | undefined {
  const last = services.at(-1)
  return trace.spans.find(
    (span) => span.service === last && isSubsequence(services, servicePath(ancestry(trace, span))),
  )
}

/** A chain nearest-first: each span starts no earlier than its parent (2 ms for the clocks of two processes). */
function startsAfterParents(chain: TraceSpan[]): boolean {
  return chain.every((span, index) => {
    const parent = chain[index + 1]
    return parent === undefined || span.start >= parent.start - 2000
  })
}

afterAll(() => {
  for (const realtime of clients) realtime.close()
})

describe('one trace per order, in the trace store', () => {
  let admin: Caller
  let customer: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
  })

  it('when an order is placed with a traceparent, then one trace holds gateway, order, payment, inventory, shipping, notification and the realtime push, parented across every Kafka hop in causal order', async () => {
    const realtime = createRealtimeClient({ url: system.gatewayUrl, token: () => customer.token })
    clients.push(realtime)
    const notifications = realtime.namespace('/notifications')
    if (!notifications.connected) await new Promise<void>((resolve) => notifications.once('connect', resolve))
    const heard: RealtimeNotification[] = []
    notifications.on('notification:new', (notification) => heard.push(notification))

    const { traceId, clientSpanId, traceparent } = newTraceparent()
    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, {
      product,
      quantity: 1,
      card: cards.good,
      headers: { traceparent },
    })
    await client.orderReaches(customer, orderId, 'shipped', patience)
    const deadline = Date.now() + patience
    while (!heard.some((each) => each.type === 'shipment_created') && Date.now() < deadline) await sleep(100)
    expect(heard.map((each) => each.type)).toContain('shipment_created')

    const path = ['gateway', 'order', 'payment', 'inventory', 'shipping', 'notification', 'realtime-gateway']
    const trace = await traceWhere(
      queryUrl,
      traceId,
      `a realtime-gateway span under ${path.join(' → ')}, every parent present`,
      (candidate) =>
        spanThrough(candidate, path) !== undefined && orphans(candidate, clientSpanId).length === 0,
    )
    const push = spanThrough(trace, path) as TraceSpan
    const chain = ancestry(trace, push)
    // the trace is the one the client began: its root is the gateway's request, child of the client's own span
    expect(roots(trace, clientSpanId)).toHaveLength(1)
    const root = chain.at(-1) as TraceSpan
    expect(root.service).toBe('gateway')
    expect(startsAfterParents(chain)).toBe(true)
    // across Kafka: consumer spans continue the hop (payment's, inventory's, shipping's, notification's, the push's)
    const consumerHops = chain.filter((span) => span.tags['span.kind'] === 'consumer')
    expect(new Set(consumerHops.map((span) => span.service))).toEqual(
      new Set(['payment', 'order', 'inventory', 'shipping', 'notification', 'realtime-gateway']),
    )
    // no credential of the customer's went into the trace
    const everything = JSON.stringify(trace)
    expect(everything).not.toMatch(/Bearer |eyJ[\w-]+\.eyJ/)
    expect(everything).not.toContain(customer.token)
  })

  it('when the card is declined, then the trace shows the failed charge and the order failing after it', async () => {
    const { traceId, clientSpanId, traceparent } = newTraceparent()
    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, {
      product,
      quantity: 1,
      card: cards.declined,
      headers: { traceparent },
    })
    await client.orderReaches(customer, orderId, 'payment_failed', patience)

    const trace = await traceWhere(
      queryUrl,
      traceId,
      'an order span after a failed payment span',
      (candidate) =>
        candidate.spans.some((span) => span.service === 'payment' && span.error) &&
        spanThrough(candidate, ['gateway', 'order', 'payment', 'order']) !== undefined &&
        orphans(candidate, clientSpanId).length === 0,
    )
    const failedCharge = trace.spans.find((span) => span.service === 'payment' && span.error) as TraceSpan
    expect(servicePath(ancestry(trace, failedCharge))[0]).toBe('gateway')
  })

  it('when the stock runs out after payment, then the trace shows the reservation failing and the refund after it', async () => {
    const { traceId, clientSpanId, traceparent } = newTraceparent()
    const product = await client.createProduct(admin, { stock: 1 })
    const orderId = await client.placeOrderOk(customer, {
      product,
      quantity: 2,
      card: cards.good,
      headers: { traceparent },
    })
    await client.orderReaches(customer, orderId, 'failed', patience)

    // charged, then inventory refuses, then order compensates: payment refunds (the saga's way back, in one trace)
    const compensation = ['gateway', 'order', 'payment', 'order', 'inventory', 'order', 'payment']
    const trace = await traceWhere(
      queryUrl,
      traceId,
      `a payment span under ${compensation.join(' → ')}`,
      (candidate) =>
        spanThrough(candidate, compensation) !== undefined && orphans(candidate, clientSpanId).length === 0,
    )
    const refund = spanThrough(trace, compensation) as TraceSpan
    expect(startsAfterParents(ancestry(trace, refund))).toBe(true)
  })

  it('when a consumer dead-letters an event, then the trace it came with shows the delivery failing and where it was parked', async () => {
    // an event the realtime channel cannot take (its data lacks title, message and createdAt), sent with a traceparent
    const { traceId, traceparent } = newTraceparent()
    await sendUnacceptableNotification(system.kafka, { traceparent })

    const deadLettered = (span: TraceSpan) =>
      span.service === 'realtime-gateway' && span.events.some((event) => /dead.?letter/i.test(event.name))
    const trace = await traceWhere(
      queryUrl,
      traceId,
      'a realtime-gateway span with a dead-letter event',
      (candidate) => candidate.spans.some(deadLettered),
    )
    const span = trace.spans.find(deadLettered) as TraceSpan
    expect(span.tags['span.kind']).toBe('consumer')
    expect(JSON.stringify(span.events)).toContain('notification.created.dlt')
  })
})
