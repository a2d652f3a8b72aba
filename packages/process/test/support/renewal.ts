// A third process that no service has, declared in the tests alone to show that a new process is a declaration and
// needs no code in the module: a subscription's renewal — charge the period, then extend the subscription; when the
// extension fails, the charge is refunded (its compensation). Its owner is the `subscriptions` row. It speaks through
// catalogue events (stand-ins for a billing service's own: the tests add no catalogue types): the answers to its
// commands found by the stamp they carry back, and the same events unstamped by the subscription id their `orderId`
// carries.
import type { EventData } from '@meridian/contracts'
import { type Fragment, type Queryable, type Sql, transaction } from '@meridian/db'
import { createEvent } from '@meridian/events'
import { uniqueName } from '@meridian/testkit'
import { Type } from 'typebox'
import {
  type Decision,
  defineProcess,
  type InstanceBase,
  type MechanicsOptions,
  type OwnFact,
  ProcessConflict,
  type Steps,
  stepMechanics,
  unchanged,
} from '../../src/index.ts'

export const renewalType = 'renewal'

export const renewalStates = ['renewing', 'charged', 'renewed', 'cancelled', 'refunding', 'refunded'] as const
export type RenewalState = (typeof renewalStates)[number]

export interface Renewal extends InstanceBase {
  state: RenewalState
  step: 'charge' | 'extend' | 'refund' | null
  paymentId: string | null
  /** periods paid so far: the owner's column, written with the instance */
  periods: number
}

export type RenewalFact =
  | { kind: 'charged'; paymentId: string }
  | { kind: 'extended' }
  | { kind: 'extend_failed'; reason: string }
  | { kind: 'payment.refunded'; amount: number }

export type RenewalCommand = { type: 'charge' | 'extend' | 'refund'; attempt: number; reason?: string }

/** The subscription: the row every decision locks first and whose status and periods it writes. */
export interface Subscription {
  id: string
  customerId: string
  plan: string
  priceCents: number
  status: string
  periods: number
}

/** A step's wait per attempt: long, so that only a test's own `makeDue` makes a deadline pass. */
export const stepWaitMs = 60_000

export const renewalSteps: Steps<Renewal, RenewalCommand> = {
  charge: {
    kind: 'forward',
    deadlineMs: stepWaitMs,
    attempts: 3,
    backoff: 'doubling',
    // undone by the refund when the renewal fails after it
    compensation: 'refund',
    ask: (_, attempt) => ({ type: 'charge', attempt }),
  },
  extend: {
    kind: 'forward',
    deadlineMs: stepWaitMs,
    attempts: 2,
    ask: (_, attempt) => ({ type: 'extend', attempt }),
  },
  refund: {
    kind: 'compensation',
    deadlineMs: stepWaitMs,
    attempts: 2,
    backoff: 'doubling',
    ask: (instance, attempt) => ({ type: 'refund', attempt, reason: instance.failureReason ?? 'undone' }),
  },
}

const forwardStates: readonly RenewalState[] = ['renewing', 'charged']
/** What the module's step mechanics know of a renewal: its forward steps run while it renews. */
const renewalMechanics: MechanicsOptions<Renewal, RenewalCommand> = {
  noun: 'the renewal',
  forwardActive: (instance) => forwardStates.includes(instance.state),
  // a failed renewal refunds its charge (the compensation declared beside the charge)
  failed: (instance, failedStep, reason) => ({
    next: { ...instance, state: 'refunding', failedStep, failureReason: reason },
    commands: [],
  }),
}
const mechanics = stepMechanics(renewalSteps, renewalMechanics)

/** A renewal just begun: its charge asked. */
export function renewalStarted(periods: number): Decision<Renewal, RenewalCommand> {
  return mechanics.ask(
    {
      state: 'renewing',
      step: null,
      attempt: 1,
      compensation: 'none',
      failedStep: null,
      failureReason: null,
      paymentId: null,
      periods,
    },
    'charge',
  )
}

const refunding = (instance: Renewal, failedStep: string, reason: string) =>
  mechanics.fail(instance, failedStep, reason)

/** The renewal's decision on its own facts and an operator's compensate: pure (timeouts and retries are the module's). */
export function decideRenewal(
  instance: Renewal,
  fact: OwnFact<RenewalFact>,
): Decision<Renewal, RenewalCommand> {
  switch (fact.kind) {
    case 'charged': {
      if (instance.state !== 'renewing')
        return unchanged(instance, { step: 'charge', outcome: 'late', detail: `${fact.paymentId} again` })
      const asked = mechanics.ask({ ...instance, state: 'charged', paymentId: fact.paymentId }, 'extend')
      return {
        ...asked,
        log: [{ step: 'charge', outcome: 'succeeded', detail: fact.paymentId }, ...asked.log],
      }
    }
    case 'extended':
      if (instance.state !== 'charged')
        return unchanged(instance, { step: 'extend', outcome: 'late', detail: 'not awaited' })
      return {
        next: { ...instance, state: 'renewed', step: null, attempt: 1, periods: instance.periods + 1 },
        deadlineInMs: null,
        commands: [],
        log: [{ step: 'extend', outcome: 'succeeded', attempt: instance.attempt }],
      }
    case 'extend_failed':
      if (instance.state !== 'charged')
        return unchanged(instance, { step: 'extend', outcome: 'late', detail: fact.reason })
      return refunding(instance, 'extend', fact.reason)
    case 'payment.refunded': {
      const decision = mechanics.compensated(instance, 'refund', fact.amount.toFixed(2))
      if (decision.next.compensation !== 'done' || instance.compensation === 'done') return decision
      return { ...decision, next: { ...decision.next, state: 'refunded' } }
    }
    case 'operator.compensate':
      if (instance.state === 'renewing') {
        // nothing was charged: nothing to undo
        return {
          next: { ...instance, state: 'cancelled', step: null, attempt: 1 },
          deadlineInMs: null,
          commands: [],
          log: [{ step: 'renewal', outcome: 'operator', detail: fact.reason }],
        }
      }
      if (instance.state === 'charged') return refunding(instance, 'operator', fact.reason)
      if (instance.state === 'refunding' && instance.compensation === 'escalated') {
        return {
          ...mechanics.retried(instance),
          log: [{ step: 'refund', outcome: 'operator', detail: fact.reason }],
        }
      }
      throw new ProcessConflict(`the renewal is ${instance.state}: there is nothing to compensate`)
  }
}

/** A new subscription's key, unique in the run. */
export const newSubscriptionKey = () =>
  uniqueName('sub')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')

/** A subscription's key: `sub-` and lower case letters, digits or dashes (an order's uuid is not one). */
const subscriptionKey = /^sub-[a-z0-9-]{1,60}$/

/** What each answer tells a renewal. */
const renewalFacts = {
  'payment.processed': (data: EventData<'payment.processed'>): RenewalFact => ({
    kind: 'charged',
    paymentId: data.paymentId,
  }),
  'inventory.reserved': (): RenewalFact => ({ kind: 'extended' }),
  'inventory.failed': (data: EventData<'inventory.failed'>): RenewalFact => ({
    kind: 'extend_failed',
    reason: data.reason,
  }),
}

/** An unstamped event about a subscription: the renewal its data names (as a service that never stamps would send). */
/** An event names its renewal by the subscription id its orderId carries (its fact: the answer route's). */
const bySubscription = {
  key: ({ orderId }: { orderId: string }) => (subscriptionKey.test(orderId) ? orderId : undefined),
}

const source = 'renewal-test'
const lineOf = (owner: Subscription) => ({
  productId: owner.plan,
  quantity: 1,
  price: owner.priceCents / 100,
})

export const renewalProcess = defineProcess<Renewal, RenewalFact, RenewalCommand, Subscription>({
  type: renewalType,
  description:
    "A subscription's renewal: charge the period, extend it; refund the charge when extending fails",
  states: renewalStates,
  finalStates: ['renewed', 'cancelled', 'refunded'],
  steps: renewalSteps,
  events: {
    'payment.processed': bySubscription,
    'payment.failed': bySubscription,
    'inventory.reserved': bySubscription,
    'inventory.failed': bySubscription,
    'payment.refunded': bySubscription,
  },
  // the same answers, stamped: found by the stamp they carry back, whatever their data names; a declined charge is a
  // failed attempt (an earlier attempt's decline is the module's to set aside)
  answers: {
    'payment.processed': { fact: renewalFacts['payment.processed'] },
    'payment.failed': { failed: (data) => data.reason },
    'inventory.reserved': { fact: renewalFacts['inventory.reserved'] },
    'inventory.failed': { fact: renewalFacts['inventory.failed'] },
    // its data is its fact ({ kind: 'payment.refunded', amount, … })
    'payment.refunded': 'fact',
  },
  decide: decideRenewal,
  mechanics: renewalMechanics,
  data: Type.Object({ paymentId: Type.Union([Type.String(), Type.Null()]) }),
  fromOwner: (owner) => ({ periods: owner.periods }),
  commandEvent: (command, { key, instance, owner }) => {
    const charge = { orderId: key, customerId: owner.customerId, total: owner.priceCents / 100 }
    switch (command.type) {
      case 'charge':
        return createEvent(
          'payment.requested',
          { ...charge, items: [lineOf(owner)], attempt: command.attempt },
          { source },
        )
      case 'extend':
        return createEvent(
          'inventory.reservation_requested',
          {
            ...charge,
            items: [lineOf(owner)],
            paymentId: instance.paymentId ?? 'none',
            attempt: command.attempt,
          },
          { source },
        )
      case 'refund':
        return createEvent(
          'payment.refund_requested',
          {
            orderId: key,
            reason: command.reason ?? 'undone',
            attempt: command.attempt,
            cause: 'compensation',
          },
          { source },
        )
    }
  },
  owner: {
    select: (key, sql) => sql`
      select id, customer_id, plan, price_cents, status, periods from subscriptions where id = ${key}`,
    read: (row) => ({
      id: String(row.id),
      customerId: String(row.customer_id),
      plan: String(row.plan),
      priceCents: Number(row.price_cents),
      status: String(row.status),
      periods: Number(row.periods),
    }),
    write: (key, owner, next, sql): Fragment | null =>
      next.state === owner.status && next.periods === owner.periods
        ? null
        : sql`update subscriptions set status = ${next.state}, periods = ${next.periods} where id = ${key}`,
  },
  links: (key) => ({ subscription: { href: `/api/v1/subscriptions/${key}`, method: 'GET' } }),
})

/** The owner's table, as the service that owns subscriptions would migrate it. */
export async function createSubscriptionsTable(sql: Queryable): Promise<void> {
  await sql`
    create table subscriptions (
      id text primary key,
      customer_id text not null,
      plan text not null,
      price_cents integer not null,
      status text not null,
      periods integer not null default 0
    )`
}

/**
 * A subscription and its renewal begun, in one transaction (as the owning service's use case would write them):
 * its row, the instance waiting for the charge, the charge's command in the outbox.
 */
export async function beginRenewal(
  sql: Sql,
  start: (tx: Queryable, owner: Subscription) => Promise<void>,
  key: string,
  { priceCents = 990, periods = 0 }: { priceCents?: number; periods?: number } = {},
): Promise<Subscription> {
  const owner: Subscription = {
    id: key,
    customerId: 'customer-1',
    plan: 'plan-monthly',
    priceCents,
    status: 'renewing',
    periods,
  }
  await transaction(sql, async (tx) => {
    await tx`
      insert into subscriptions (id, customer_id, plan, price_cents, status, periods)
      values (${owner.id}, ${owner.customerId}, ${owner.plan}, ${owner.priceCents}, ${owner.status}, ${owner.periods})`
    await start(tx, owner)
  })
  return owner
}
