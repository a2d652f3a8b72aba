// The provider's webhook events about a charge's money after it was made: a refund made at the provider
// (charge.refunded: from its dashboard, or one of Meridian's whose answer was lost) and a chargeback
// (charge.dispute.created). Each is applied in one transaction under the order's advisory lock — the lock Meridian's
// own charges and refunds of the order take — together with the event's record in provider_events, so a redelivery
// applies nothing and a refund of Meridian's in flight is waited for.
// - charge.refunded: the provider's refunds of the charge are read from the provider now (the Charge of an event
//   leaves them out, and a later refund may have been made since); each refund not recorded yet is recorded as the
//   provider's (Meridian's own path, asking again under its key after a lost answer, then adds nothing), and the
//   payment's refunded cents become the provider's amount_refunded when that is more. What that adds is announced
//   with payment.refunded.v2 (cause: provider); nothing when Meridian's own refunds account for it already, or when
//   the refund was Meridian's own request (its key, `refund-…`: an answer lost, which its own path announces when it
//   asks again). So the event is idempotent, and commutes with Meridian's own refunds and with the provider's other
//   charge.refunded.
// - charge.dispute.created: the payment is marked disputed (its first dispute) and payment.disputed appended.
import { fromMinorUnits } from '@meridian/contracts'
import { type Queryable, type Sql, type TransactionSql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { PaymentProvider } from '../clients/payment-provider.ts'
import type { PaymentRecord, PaymentsRepository } from '../data/payments-repository.ts'
import type { ProviderEventsRepository } from '../data/provider-events-repository.ts'
import { serviceSource } from './payment-data.ts'
import type { ProviderEvent, ProviderEventOutcome } from './provider-event.ts'

/** The event types this module applies. */
export const providerChargeEventTypes: ReadonlySet<string> = new Set([
  'charge.refunded',
  'charge.dispute.created',
])

/** The reason payment.refunded.v2 gives for a refund made at the provider. */
export const providerRefundReason = 'refunded at the payment provider'

export interface ProviderChargeEventsDependencies {
  sql: Sql
  payments: PaymentsRepository
  providerEvents: ProviderEventsRepository
  /** asked for a charge's refunds as they are now */
  provider: Pick<PaymentProvider, 'chargeRefunds'>
}

/**
 * True for the provider key of one of Meridian's own refunds (`refund-<orderId>`, `refund-<orderId>-<id>`,
 * `refund-<refundKey>[-n]`): the request an event names was Meridian's, whose own path announces the refund.
 */
export const isOwnRefundKey = (key: string | null | undefined): boolean =>
  typeof key === 'string' && key.startsWith('refund-')

/** The object of a charge event as read here: a Charge (charge.refunded) or a Dispute (charge.dispute.created). */
interface ChargeEventObject {
  /** ch_… or dp_… */
  id?: unknown
  payment_intent?: unknown
  /** a Dispute's disputed amount, cents */
  amount?: unknown
  /** a Dispute's reason */
  reason?: unknown
}

/** Thrown inside the transaction when the event was recorded meanwhile (delivered twice at once): rolls it back. */
class RecordedMeanwhile extends Error {}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined
const cents = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined

/** The PaymentIntent (pi_…) the charge or dispute belongs to: the payment's provider_charge_id. */
function intentOf(object: ChargeEventObject): string | undefined {
  const intent = object.payment_intent
  if (typeof intent === 'string') return text(intent)
  if (intent && typeof intent === 'object' && 'id' in intent) return text(intent.id)
  return undefined
}

export async function receiveProviderChargeEvent(
  deps: ProviderChargeEventsDependencies,
  event: ProviderEvent,
): Promise<ProviderEventOutcome> {
  const object: ChargeEventObject = event.data.object
  const paymentIntent = intentOf(object)
  const payment = paymentIntent ? await deps.payments.findByChargeId(paymentIntent) : undefined
  const record = (outcome: ProviderEventOutcome, sql?: Queryable) =>
    deps.providerEvents.recordOnce({ eventId: event.id, type: event.type, paymentIntent, outcome }, sql)
  if (!payment) return (await record('no such payment')) ? 'no such payment' : 'duplicate'
  try {
    return await transaction(deps.sql, async (tx) => {
      await deps.payments.lockOrder(payment.orderId, tx)
      const outcome =
        event.type === 'charge.refunded'
          ? await refundedAtProvider(deps, payment, text(object.id), event.request?.idempotency_key, tx)
          : await disputed(deps, payment, object, tx)
      if (!(await record(outcome, tx))) throw new RecordedMeanwhile()
      return outcome
    })
  } catch (error) {
    if (error instanceof RecordedMeanwhile) return 'duplicate'
    throw error
  }
}

/** charge.refunded, under the order's lock: the provider's refunds of the charge recorded, what they add announced. */
async function refundedAtProvider(
  deps: ProviderChargeEventsDependencies,
  payment: PaymentRecord,
  chargeId: string | undefined,
  requestKey: string | null | undefined,
  tx: TransactionSql,
): Promise<ProviderEventOutcome> {
  if (!chargeId) return 'no such payment'
  const now = await deps.provider.chargeRefunds(chargeId)
  const moved = await deps.payments.recordProviderRefunds(
    payment.id,
    now.refunds.map((refund) => ({ refundId: refund.id, amountCents: refund.amountCents })),
    now.amountRefundedCents,
    tx,
  )
  const added = moved ? moved.after - moved.before : 0
  // a refund Meridian asked for itself (its answer lost): counted now, announced by its own path when it asks again
  if (isOwnRefundKey(requestKey)) return `refunded by Meridian: ${added} cents added`
  if (moved && added > 0) {
    const refunded = createEvent(
      'payment.refunded.v2',
      {
        orderId: payment.orderId,
        paymentId: payment.id,
        amount: fromMinorUnits(added),
        refundedTotal: fromMinorUnits(moved.after),
        cause: 'provider',
        reason: providerRefundReason,
      },
      { source: serviceSource },
    )
    await appendToOutbox(tx, refunded, { aggregateId: payment.orderId })
  }
  return `refunded at the provider: ${added} cents added`
}

/** charge.dispute.created, under the order's lock: the payment marked disputed once, payment.disputed appended. */
async function disputed(
  deps: ProviderChargeEventsDependencies,
  payment: PaymentRecord,
  dispute: ChargeEventObject,
  tx: TransactionSql,
): Promise<ProviderEventOutcome> {
  const disputeId = text(dispute.id)
  if (!disputeId) return 'no such payment'
  const reason = (text(dispute.reason) ?? 'general').slice(0, 100)
  if (!(await deps.payments.markDisputed(payment.id, { disputeId, reason }, tx))) return 'disputed already'
  const event = createEvent(
    'payment.disputed',
    {
      orderId: payment.orderId,
      paymentId: payment.id,
      disputeId,
      amount: fromMinorUnits(cents(dispute.amount) ?? payment.amountCents),
      reason,
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, event, { aggregateId: payment.orderId })
  return 'disputed'
}
