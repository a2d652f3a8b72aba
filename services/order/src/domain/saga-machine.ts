// The order saga's state machine, as a pure function: an instance and what just happened (an event from payment,
// inventory or shipping, a customer's cancel, a step's deadline, an operator's action) in; the next instance, the
// commands to send, the step-log lines and any escalation out. No I/O: the process module's manager applies the
// decision (the saga declared in saga-process.ts) in one transaction with the order's status and the outbox. A step's
// deadline and an operator's retry are the module's (decideOn: its step mechanics, with what sagaMechanics says).
//
// The payment and inventory steps are choreographed (payment charges on order.placed, inventory reserves on
// payment.processed); the shipment step is commanded: reaching inventory_reserved sends shipment.requested, in the
// transaction that holds the order's row, so a customer's cancel (which takes the same row first) and the start of
// the shipment step exclude each other — a cancel is refused from inventory_reserved on, and a cancelled saga never
// asks for a shipment. The process manager watches the steps, asks again when one does not answer in time
// (payment.requested, inventory.reservation_requested, shipment.requested), and on failure or cancellation runs the
// compensations in reverse order, one after the other: release the stock (inventory.release_requested), then refund
// the payment (payment.refund_requested), each retried with backoff and escalated when it still fails.
// Events of different topics arrive in any order: a forward event moves the saga as far as it proves (a reservation
// proves the payment), and a forward success that arrives after the saga failed or was cancelled is undone again —
// except a payment of an order whose payment failed (the customer paid it with POST /payments): the saga goes on.
import type { CompensationState, OrderStatus, SagaState, SagaStep } from '@meridian/contracts'
import {
  type Decision,
  type MechanicsOptions,
  newInstance,
  ProcessConflict,
  type StepMechanics,
  type Steps,
  stepMechanics,
  unchanged,
} from '@meridian/process'

export type ForwardStep = Extract<SagaStep, 'payment' | 'inventory' | 'shipment'>
export type CompensationStep = Extract<SagaStep, 'release' | 'refund'>

/** What the state machine reads and writes of an instance. */
export interface SagaInstance {
  state: SagaState
  step: SagaStep | null
  attempt: number
  compensation: CompensationState
  failedStep: string | null
  failureReason: string | null
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

const forwardRank: Partial<Record<SagaState, number>> = {
  created: 0,
  payment_processed: 1,
  inventory_reserved: 2,
  shipped: 3,
}
const forwardStates = ['created', 'payment_processed', 'inventory_reserved', 'shipped'] as const
type ForwardState = (typeof forwardStates)[number]

/** The step a forward state waits for, and the order status that goes with it. */
const awaitedIn: Record<ForwardState, ForwardStep | null> = {
  created: 'payment',
  payment_processed: 'inventory',
  inventory_reserved: 'shipment',
  shipped: null,
}
const orderStatusIn: Record<ForwardState, OrderStatus> = {
  created: 'placed',
  payment_processed: 'paid',
  inventory_reserved: 'reserved',
  shipped: 'shipped',
}

/** The command that asks a step (again). */
const requestOf: Record<SagaStep, StepRequest> = {
  payment: 'payment.requested',
  inventory: 'inventory.reservation_requested',
  shipment: 'shipment.requested',
  release: 'inventory.release_requested',
  refund: 'payment.refund_requested',
}

const isRunning = (state: SagaState): state is ForwardState => forwardRank[state] !== undefined

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
    payment: forwardStep(requestOf.payment, 'refund'),
    inventory: forwardStep(requestOf.inventory, 'release'),
    shipment: forwardStep(requestOf.shipment),
    release: compensationStep(requestOf.release),
    refund: compensationStep(requestOf.refund),
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

const mechanicsByTiming = new WeakMap<SagaTiming, StepMechanics<SagaInstance, SagaCommand>>()

/** The module's step mechanics for the saga's steps at `timing` (made once per timing). */
function mechanicsOf(timing: SagaTiming): StepMechanics<SagaInstance, SagaCommand> {
  let mechanics = mechanicsByTiming.get(timing)
  if (!mechanics) {
    mechanics = stepMechanics(sagaSteps(timing), sagaMechanics)
    mechanicsByTiming.set(timing, mechanics)
  }
  return mechanics
}

/** A compensation's wait for its answer: the backoff, doubled for each further attempt. */
export const compensationWaitMs = (timing: SagaTiming, attempt: number): number =>
  mechanicsOf(timing).waitMs('release', attempt)

/** A forward event: the saga moves as far as it proves, records the ids, or undoes it when the saga is over. */
function forward(
  instance: SagaInstance,
  timing: SagaTiming,
  reached: ForwardState,
  step: ForwardStep,
  ids: Partial<Pick<SagaInstance, 'paymentId' | 'reservationId' | 'shipmentId'>>,
): SagaDecision {
  const recorded: SagaInstance = { ...instance, ...ids }
  const detail = Object.values(ids).join(', ')
  if (isRunning(instance.state)) {
    const rank = forwardRank[reached] ?? 0
    if (rank <= (forwardRank[instance.state] ?? 0)) {
      // an earlier attempt's answer, or a later step's event came first: nothing moves
      return unchanged(recorded, {
        step,
        outcome: 'succeeded',
        detail: `${detail} (already ${instance.state})`,
      })
    }
    const awaited = awaitedIn[reached]
    return {
      next: {
        ...recorded,
        state: reached,
        step: awaited,
        attempt: 1,
        orderStatus: instance.orderStatus === 'delivered' ? 'delivered' : orderStatusIn[reached],
      },
      deadlineInMs: awaited ? timing.stepTimeoutMs : null,
      // the shipment step is the saga's to start (never both a cancel and a shipment): shipping ships on request
      commands: awaited === 'shipment' ? [{ type: 'shipment.requested', attempt: 1 }] : [],
      log: [
        { step, outcome: 'succeeded', attempt: instance.step === step ? instance.attempt : 1, detail },
        ...(awaited ? [{ step: awaited, outcome: 'started' as const }] : []),
      ],
    }
  }

  // the saga failed or was cancelled: this step's success arrived late and must be undone too (a shipment can't be)
  return mechanicsOf(timing).lateSucceeded(
    recorded,
    step,
    `${detail} after the saga ${instance.state}`,
    `shipment ${ids.shipmentId} was created for order whose saga ${instance.state}: stop it at the carrier`,
  )
}

/** A compensation's answer: the release leads to the refund, the refund ends the compensations. */
function compensated(
  instance: SagaInstance,
  timing: SagaTiming,
  step: CompensationStep,
  detail: string,
): SagaDecision {
  const decision = mechanicsOf(timing).compensated(instance, step, detail)
  if (decision.next.compensation !== 'done' || instance.compensation === 'done') {
    return decision.deadlineInMs === 'keep' ? unchanged(instance, ...decision.log) : decision
  }
  // the last compensation answered: a cancelled order is cancelled now
  const orderStatus = instance.state === 'cancelled' ? 'cancelled' : instance.orderStatus
  return { ...decision, next: { ...decision.next, orderStatus } }
}

/** An operator runs the compensations: a running saga fails now; a failed or cancelled one undoes everything again. */
function compensatedByOperator(instance: SagaInstance, timing: SagaTiming, reason: string): SagaDecision {
  if (instance.state === 'shipped')
    throw new ProcessConflict('the order has shipped: there is nothing to compensate')
  if (instance.compensation === 'running') throw new ProcessConflict('the compensations are running already')
  const decision = isRunning(instance.state)
    ? mechanicsOf(timing).fail(instance, instance.step ?? 'operator', reason)
    : mechanicsOf(timing).startCompensations({ ...instance, failureReason: instance.failureReason ?? reason })
  return { ...decision, log: [{ step: 'order', outcome: 'operator', detail: reason }, ...decision.log] }
}

/** True when the order's payment failed and nothing else happened since: the customer may still pay it. */
export const awaitsPaymentAgain = (instance: SagaInstance): boolean =>
  instance.state === 'failed' && instance.failedStep === 'payment' && instance.compensation === 'none'

/**
 * A payment of an order whose payment had failed (the customer paid it with POST /payments): the saga goes on from
 * there as if the payment step had succeeded — the order is paid, inventory reserves on the same payment.processed.
 */
function paidAgain(instance: SagaInstance, timing: SagaTiming, paymentId: string): SagaDecision {
  return {
    next: {
      ...instance,
      paymentId,
      state: 'payment_processed',
      step: 'inventory',
      attempt: 1,
      failedStep: null,
      failureReason: null,
      orderStatus: 'paid',
    },
    deadlineInMs: timing.stepTimeoutMs,
    commands: [],
    log: [
      { step: 'payment', outcome: 'succeeded', detail: `${paymentId} (paid after the payment failed)` },
      { step: 'inventory', outcome: 'started' },
    ],
  }
}

/**
 * The payment waits for the customer to authenticate the charge (3-D Secure): the order is payment_action_required
 * with the provider's page. The payment service owns the deadline (it cancels the provider's payment and answers
 * payment.failed); the saga keeps asking at its step timeout as for any step, and each answer that the payment still
 * waits starts its attempts again, so a long authentication never exhausts them.
 */
function awaitingAuthentication(
  instance: SagaInstance,
  timing: SagaTiming,
  fact: Extract<SagaFact, { kind: 'payment.action_required' }>,
): SagaDecision {
  const detail = `authentication asked until ${fact.expiresAt}`
  if (instance.state !== 'created') {
    return unchanged(instance, { step: 'payment', outcome: 'waiting', detail: `${detail} (not awaited)` })
  }
  const first = instance.orderStatus !== 'payment_action_required'
  return {
    next: {
      ...instance,
      step: 'payment',
      attempt: 1,
      authenticateUrl: fact.authenticateUrl,
      orderStatus: 'payment_action_required',
    },
    deadlineInMs: timing.stepTimeoutMs,
    commands: [],
    log: first ? [{ step: 'payment', outcome: 'waiting', attempt: instance.attempt, detail }] : [],
  }
}

export function decideSaga(instance: SagaInstance, fact: SagaFact, timing: SagaTiming): SagaDecision {
  switch (fact.kind) {
    case 'payment.processed':
      if (awaitsPaymentAgain(instance)) return paidAgain(instance, timing, fact.paymentId)
      return forward(instance, timing, 'payment_processed', 'payment', { paymentId: fact.paymentId })
    case 'inventory.reserved':
      return forward(instance, timing, 'inventory_reserved', 'inventory', {
        reservationId: fact.reservationId,
      })
    case 'shipment.created':
      return forward(instance, timing, 'shipped', 'shipment', { shipmentId: fact.shipmentId })

    case 'shipment.delivered': {
      // normally after shipment.created; first when the topics' order turned (a delivery proves the shipment)
      const shipped =
        instance.state === 'shipped'
          ? unchanged<SagaInstance, SagaCommand>({ ...instance, shipmentId: fact.shipmentId })
          : forward(instance, timing, 'shipped', 'shipment', { shipmentId: fact.shipmentId })
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

    case 'payment.action_required':
      return awaitingAuthentication(instance, timing, fact)

    case 'payment.failed':
      if (instance.state !== 'created') {
        return unchanged(instance, {
          step: 'payment',
          outcome: 'failed',
          detail: `${fact.reason} (not awaited)`,
        })
      }
      // nothing was charged or reserved: nothing to undo; the customer may still pay (POST /payments)
      return {
        next: {
          ...instance,
          state: 'failed',
          step: null,
          failedStep: 'payment',
          failureReason: fact.reason,
          orderStatus: 'payment_failed',
        },
        deadlineInMs: null,
        commands: [],
        log: [{ step: 'payment', outcome: 'failed', attempt: instance.attempt, detail: fact.reason }],
      }

    case 'inventory.failed':
      if (!isRunning(instance.state) || (forwardRank[instance.state] ?? 0) > 1) {
        return unchanged(instance, {
          step: 'inventory',
          outcome: 'failed',
          detail: `${fact.reason} (not awaited)`,
        })
      }
      return mechanicsOf(timing).fail(instance, 'inventory', fact.reason)

    case 'inventory.released':
      return compensated(instance, timing, 'release', fact.reservationId ?? 'nothing was held')
    case 'payment.refunded':
      return compensated(
        instance,
        timing,
        'refund',
        fact.paymentId ? `${fact.paymentId}: ${fact.amount.toFixed(2)}` : 'nothing was charged',
      )

    case 'cancel': {
      // once the shipment step has begun (inventory_reserved sent shipment.requested) the order may be shipping:
      // a cancel then would refund an order that ships, so it is refused
      const beforeShipment = instance.state === 'created' || instance.state === 'payment_processed'
      if (!awaitsPaymentAgain(instance) && !beforeShipment) {
        throw new ProcessConflict(`the order can no longer be cancelled (saga ${instance.state})`)
      }
      const cancelled: SagaInstance = {
        ...instance,
        state: 'cancelled',
        failureReason: fact.reason,
        orderStatus: 'cancelling',
      }
      const started = mechanicsOf(timing).startCompensations(cancelled, [
        { type: 'order.cancelled', reason: fact.reason },
      ])
      return {
        ...started,
        log: [{ step: 'order', outcome: 'succeeded', detail: `cancelled: ${fact.reason}` }, ...started.log],
      }
    }

    case 'operator.compensate':
      return compensatedByOperator(instance, timing, fact.reason)
  }
}
