// The order saga's state machine, pure: an instance and what happened (payment's, inventory's or shipping's answer, a
// customer's cancel, an operator's compensate) in; the next instance, its commands, log lines and any escalation out.
// Timeouts, retries and declines are the module's (saga-process.ts declares it). The payment and inventory steps are
// choreographed (payment charges on order.placed, inventory reserves on payment.processed); the shipment step is
// commanded from inventory_reserved, in the transaction that holds the order's row, so a cancel (refused from then on)
// and a shipment exclude each other. A failure or cancel runs the compensations in reverse order: release, then
// refund. Answers arrive in any order: a forward event moves the saga as far as it proves (a reservation proves the
// payment); a forward success after a failure or cancel is undone again — except a payment of an order whose payment
// failed (the customer paid it with POST /payments): the saga goes on.
import type { OrderStatus, SagaState, SagaStep } from '@meridian/contracts'
import {
  type Decision,
  type InstanceBase,
  type MechanicsOptions,
  newInstance,
  ProcessConflict,
  type StepMechanics,
  type Steps,
  unchanged,
} from '@meridian/process'

export type ForwardStep = Extract<SagaStep, 'payment' | 'inventory' | 'shipment'>
export type CompensationStep = Extract<SagaStep, 'release' | 'refund'>

/** What the state machine reads and writes of an instance. */
export interface SagaInstance extends InstanceBase {
  state: SagaState
  step: SagaStep | null
  paymentId: string | null
  reservationId: string | null
  shipmentId: string | null
  /** the provider's 3-D Secure page while the payment waits for the customer (payment.action_required) */
  authenticateUrl: string | null
  orderStatus: OrderStatus
}

/** What happened. */
export type SagaFact =
  | { kind: 'payment.processed'; paymentId: string }
  | { kind: 'payment.action_required'; authenticateUrl: string | null; expiresAt: string }
  | { kind: 'payment.failed'; reason: string }
  | { kind: 'inventory.reserved'; reservationId: string }
  | { kind: 'inventory.failed'; reason: string }
  | { kind: 'shipment.created'; shipmentId: string }
  | { kind: 'shipment.delivered'; shipmentId: string }
  | { kind: 'inventory.released'; reservationId?: string }
  | { kind: 'payment.refunded'; paymentId?: string; amount: number }
  | { kind: 'cancel'; reason: string }
  | { kind: 'operator.compensate'; reason: string }

/** The commands that ask a step (again): forward steps, then the compensations. */
export type StepRequest =
  | 'payment.requested'
  | 'inventory.reservation_requested'
  | 'shipment.requested'
  | 'inventory.release_requested'
  | 'payment.refund_requested'

/** What the process manager sends: a step's request (with its attempt), or the order's own events. */
export type SagaCommand =
  | { type: StepRequest; attempt: number; reason?: string }
  | { type: 'order.failed'; reason: string; failedStep: string }
  | { type: 'order.cancelled'; reason: string }
  | { type: 'order.completed' }

export interface SagaTiming {
  /** how long a forward step may take before it is asked again */
  stepTimeoutMs: number
  /** attempts of a forward step before the saga fails */
  stepAttempts: number
  /** a compensation's first wait for its answer; doubled for each further attempt */
  compensationBackoffMs: number
  /** attempts of a compensation before it is escalated */
  compensationAttempts: number
}

/** A decision of the process module's kind: the next instance, its deadline, commands, log lines, escalation. */
export type SagaDecision = Decision<SagaInstance, SagaCommand>

/** The forward states in their order: the step each waits for, and the order status that goes with it. */
const forwardStates = {
  created: { awaits: 'payment', orderStatus: 'placed' },
  payment_processed: { awaits: 'inventory', orderStatus: 'paid' },
  inventory_reserved: { awaits: 'shipment', orderStatus: 'reserved' },
  shipped: { awaits: null, orderStatus: 'shipped' },
} as const satisfies Record<string, { awaits: ForwardStep | null; orderStatus: OrderStatus }>
type ForwardState = keyof typeof forwardStates
const rankOf = (state: SagaState): number => Object.keys(forwardStates).indexOf(state)

const isRunning = (state: SagaState): state is ForwardState => state in forwardStates

/**
 * The saga's steps as the process module declares them: the forward steps wait `stepTimeoutMs` per attempt and fail
 * the saga once spent, each with the compensation that undoes it (run in reverse order: release, then refund); the
 * compensations wait the backoff, doubled for each further attempt; each asked with its request command.
 */
export function sagaSteps(timing: SagaTiming): Steps<SagaInstance, SagaCommand> {
  const forwardStep = (type: StepRequest, compensation?: CompensationStep) => ({
    kind: 'forward' as const,
    deadlineMs: timing.stepTimeoutMs,
    attempts: timing.stepAttempts,
    exhausted: 'fail' as const,
    ...(compensation ? { compensation } : {}),
    ask: (_instance: SagaInstance, attempt: number): SagaCommand => ({ type, attempt }),
  })
  const compensationStep = (type: StepRequest) => ({
    kind: 'compensation' as const,
    deadlineMs: timing.compensationBackoffMs,
    attempts: timing.compensationAttempts,
    backoff: 'doubling' as const,
    ask: (instance: SagaInstance, attempt: number): SagaCommand => ({
      type,
      attempt,
      reason: instance.failureReason ?? `the saga ${instance.state}`,
    }),
  })
  return {
    payment: forwardStep('payment.requested', 'refund'),
    inventory: forwardStep('inventory.reservation_requested', 'release'),
    shipment: forwardStep('shipment.requested'),
    release: compensationStep('inventory.release_requested'),
    refund: compensationStep('payment.refund_requested'),
  }
}

/** The saga of an order just placed: waits for its payment (order.placed asks for it, payment charges on it). */
export function sagaStarted(timing: SagaTiming): SagaDecision {
  return {
    next: newInstance<SagaInstance>({
      state: 'created',
      step: 'payment',
      paymentId: null,
      reservationId: null,
      shipmentId: null,
      authenticateUrl: null,
      orderStatus: 'placed',
    }),
    deadlineInMs: timing.stepTimeoutMs,
    commands: [],
    log: [{ step: 'payment', outcome: 'started', attempt: 1 }],
  }
}

/**
 * What the module's step mechanics know of the saga: its forward steps run while it does, and its failure fails the
 * order and announces order.failed before the compensations start.
 */
export const sagaMechanics: MechanicsOptions<SagaInstance, SagaCommand> = {
  noun: 'the saga of this order',
  forwardActive: (instance) => isRunning(instance.state),
  failed: (instance, failedStep, reason) => ({
    next: { ...instance, state: 'failed', failedStep, failureReason: reason, orderStatus: 'failed' },
    commands: [{ type: 'order.failed', reason, failedStep }],
  }),
}

type Mechanics = StepMechanics<SagaInstance, SagaCommand>

/** A forward step's wait: the same for every forward step. */
const stepWaitMs = (mechanics: Mechanics) => mechanics.waitMs('payment', 1)

/** A forward event: the saga moves as far as it proves, records the ids, or undoes it when the saga is over. */
function forward(
  instance: SagaInstance,
  mechanics: Mechanics,
  reached: ForwardState,
  step: ForwardStep,
  ids: Partial<Pick<SagaInstance, 'paymentId' | 'reservationId' | 'shipmentId'>>,
): SagaDecision {
  const recorded: SagaInstance = { ...instance, ...ids }
  const detail = Object.values(ids).join(', ')
  if (!isRunning(instance.state)) {
    // the saga failed or was cancelled: this step's success arrived late and must be undone too (a shipment can't be)
    return mechanics.lateSucceeded(
      recorded,
      step,
      `${detail} after the saga ${instance.state}`,
      `shipment ${ids.shipmentId} was created for order whose saga ${instance.state}: stop it at the carrier`,
    )
  }
  if (rankOf(reached) <= rankOf(instance.state)) {
    // an earlier attempt's answer, or a later step's event came first: nothing moves
    return unchanged(recorded, {
      step,
      outcome: 'succeeded',
      detail: `${detail} (already ${instance.state})`,
    })
  }
  const { awaits, orderStatus } = forwardStates[reached]
  return {
    next: {
      ...recorded,
      state: reached,
      step: awaits,
      attempt: 1,
      orderStatus: instance.orderStatus === 'delivered' ? 'delivered' : orderStatus,
    },
    deadlineInMs: awaits ? stepWaitMs(mechanics) : null,
    // the shipment step is the saga's to start (never both a cancel and a shipment): shipping ships on request
    commands: awaits === 'shipment' ? [{ type: 'shipment.requested', attempt: 1 }] : [],
    log: [
      { step, outcome: 'succeeded', attempt: instance.step === step ? instance.attempt : 1, detail },
      ...(awaits ? [{ step: awaits, outcome: 'started' as const }] : []),
    ],
  }
}

/** A compensation's answer: the release leads to the refund; after the last, a cancelled order is cancelled. */
function compensated(
  instance: SagaInstance,
  mechanics: Mechanics,
  step: CompensationStep,
  detail: string,
): SagaDecision {
  const decision = mechanics.compensated(instance, step, detail)
  if (decision.next.compensation !== 'done' || instance.compensation === 'done') {
    return decision.deadlineInMs === 'keep' ? unchanged(instance, ...decision.log) : decision
  }
  const orderStatus = instance.state === 'cancelled' ? 'cancelled' : instance.orderStatus
  return { ...decision, next: { ...decision.next, orderStatus } }
}

/** An operator runs the compensations: a running saga fails now; a failed or cancelled one undoes everything again. */
function compensatedByOperator(instance: SagaInstance, mechanics: Mechanics, reason: string): SagaDecision {
  if (instance.state === 'shipped')
    throw new ProcessConflict('the order has shipped: there is nothing to compensate')
  if (instance.compensation === 'running') throw new ProcessConflict('the compensations are running already')
  const decision = isRunning(instance.state)
    ? mechanics.fail(instance, instance.step ?? 'operator', reason)
    : mechanics.startCompensations({ ...instance, failureReason: instance.failureReason ?? reason })
  return { ...decision, log: [{ step: 'order', outcome: 'operator', detail: reason }, ...decision.log] }
}

/** True when the order's payment failed and nothing else happened since: the customer may still pay it. */
export const awaitsPaymentAgain = (instance: SagaInstance): boolean =>
  instance.state === 'failed' && instance.failedStep === 'payment' && instance.compensation === 'none'

/**
 * A payment of an order whose payment had failed (the customer paid it with POST /payments): the saga goes on from
 * there as if the payment step had succeeded — the order is paid, inventory reserves on the same payment.processed.
 */
function paidAgain(instance: SagaInstance, mechanics: Mechanics, paymentId: string): SagaDecision {
  const cleared = { failedStep: null, failureReason: null }
  return {
    next: {
      ...instance,
      ...cleared,
      paymentId,
      state: 'payment_processed',
      step: 'inventory',
      attempt: 1,
      orderStatus: 'paid',
    },
    deadlineInMs: stepWaitMs(mechanics),
    commands: [],
    log: [
      { step: 'payment', outcome: 'succeeded', detail: `${paymentId} (paid after the payment failed)` },
      { step: 'inventory', outcome: 'started' },
    ],
  }
}

/**
 * The payment waits for the customer to authenticate the charge (3-D Secure): the order is payment_action_required
 * with the provider's page. The payment service owns the deadline (it answers payment.failed when it passes); the saga
 * asks again at its step's deadline, and each answer that the payment still waits starts its attempts again.
 */
function awaitingAuthentication(
  instance: SagaInstance,
  mechanics: Mechanics,
  fact: Extract<SagaFact, { kind: 'payment.action_required' }>,
): SagaDecision {
  const detail = `authentication asked until ${fact.expiresAt}`
  if (instance.state !== 'created') {
    return unchanged(instance, { step: 'payment', outcome: 'waiting', detail: `${detail} (not awaited)` })
  }
  const first = instance.orderStatus !== 'payment_action_required'
  const waiting = { authenticateUrl: fact.authenticateUrl, orderStatus: 'payment_action_required' as const }
  return {
    next: { ...instance, ...waiting, step: 'payment', attempt: 1 },
    deadlineInMs: stepWaitMs(mechanics),
    commands: [],
    log: first ? [{ step: 'payment', outcome: 'waiting', attempt: instance.attempt, detail }] : [],
  }
}

/** A delivery: normally after shipment.created; first when the topics' order turned (a delivery proves the shipment). */
function delivered(instance: SagaInstance, mechanics: Mechanics, shipmentId: string): SagaDecision {
  const shipped =
    instance.state === 'shipped'
      ? unchanged<SagaInstance, SagaCommand>({ ...instance, shipmentId })
      : forward(instance, mechanics, 'shipped', 'shipment', { shipmentId })
  if (shipped.next.state !== 'shipped' || instance.orderStatus === 'delivered') {
    return { ...shipped, log: [...shipped.log, { step: 'order', outcome: 'late', detail: 'delivered' }] }
  }
  return {
    ...shipped,
    next: { ...shipped.next, orderStatus: 'delivered' },
    commands: [...shipped.commands, { type: 'order.completed' }],
    log: [...shipped.log, { step: 'order', outcome: 'succeeded', detail: 'delivered' }],
  }
}

/** A customer's cancel: before the shipment step only (from inventory_reserved the order may be shipping). */
function cancelled(instance: SagaInstance, mechanics: Mechanics, reason: string): SagaDecision {
  const beforeShipment = instance.state === 'created' || instance.state === 'payment_processed'
  if (!awaitsPaymentAgain(instance) && !beforeShipment) {
    throw new ProcessConflict(`the order can no longer be cancelled (saga ${instance.state})`)
  }
  const next: SagaInstance = {
    ...instance,
    state: 'cancelled',
    failureReason: reason,
    orderStatus: 'cancelling',
  }
  const started = mechanics.startCompensations(next, [{ type: 'order.cancelled', reason }])
  return {
    ...started,
    log: [{ step: 'order', outcome: 'succeeded', detail: `cancelled: ${reason}` }, ...started.log],
  }
}

/** A failure answer of `step` not awaited now: only logged. */
const notAwaited = (instance: SagaInstance, step: ForwardStep, reason: string): SagaDecision =>
  unchanged(instance, { step, outcome: 'failed', detail: `${reason} (not awaited)` })

export function decideSaga(instance: SagaInstance, fact: SagaFact, mechanics: Mechanics): SagaDecision {
  switch (fact.kind) {
    case 'payment.processed':
      if (awaitsPaymentAgain(instance)) return paidAgain(instance, mechanics, fact.paymentId)
      return forward(instance, mechanics, 'payment_processed', 'payment', { paymentId: fact.paymentId })
    case 'inventory.reserved':
      return forward(instance, mechanics, 'inventory_reserved', 'inventory', {
        reservationId: fact.reservationId,
      })
    case 'shipment.created':
      return forward(instance, mechanics, 'shipped', 'shipment', { shipmentId: fact.shipmentId })
    case 'shipment.delivered':
      return delivered(instance, mechanics, fact.shipmentId)
    case 'payment.action_required':
      return awaitingAuthentication(instance, mechanics, fact)
    case 'payment.failed': {
      if (instance.state !== 'created') return notAwaited(instance, 'payment', fact.reason)
      // nothing was charged or reserved: nothing to undo; the customer may still pay (POST /payments)
      const failed = {
        failedStep: 'payment',
        failureReason: fact.reason,
        orderStatus: 'payment_failed' as const,
      }
      return {
        next: { ...instance, ...failed, state: 'failed', step: null },
        deadlineInMs: null,
        commands: [],
        log: [{ step: 'payment', outcome: 'failed', attempt: instance.attempt, detail: fact.reason }],
      }
    }
    case 'inventory.failed':
      if (!isRunning(instance.state) || rankOf(instance.state) > 1)
        return notAwaited(instance, 'inventory', fact.reason)
      return mechanics.fail(instance, 'inventory', fact.reason)
    case 'inventory.released':
      return compensated(instance, mechanics, 'release', fact.reservationId ?? 'nothing was held')
    case 'payment.refunded': {
      const detail = fact.paymentId ? `${fact.paymentId}: ${fact.amount.toFixed(2)}` : 'nothing was charged'
      return compensated(instance, mechanics, 'refund', detail)
    }
    case 'cancel':
      return cancelled(instance, mechanics, fact.reason)
    case 'operator.compensate':
      return compensatedByOperator(instance, mechanics, fact.reason)
  }
}
