// Order's consumers: its processes (the order saga, returns) follow every answer of payment, inventory and shipping.
// Each event is routed by the process module to the instance it names and applied in the consumer's transaction (the
// one that records the event in the inbox), so the instance, the order's status, the step log and the commands
// commit together with the event's record.
import type { EventType } from '@meridian/contracts'
import {
  type AnyServiceConsumer,
  type ConsumerHandlers,
  type ConsumersOptions,
  consumersOf,
} from '@meridian/events'
import type { ProcessManager } from '@meridian/process'

/** The consumer group of the order service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'order'

/** The answers the order's processes follow. */
export const orderEventTypes = [
  'payment.processed',
  'payment.action_required',
  'payment.failed',
  'payment.refunded',
  'payment.refund_failed.v2',
  'inventory.reserved',
  'inventory.failed',
  'inventory.released',
  'inventory.restocked.v2',
  'shipment.created',
  'shipment.delivered',
] as const satisfies readonly EventType[]
export type OrderEventType = (typeof orderEventTypes)[number]

export type OrderConsumersOptions = ConsumersOptions<OrderEventType>

/**
 * What the app's event backbone runs: a consumer of each answer, handled by the processes that follow it (the
 * process module's handlers: an answer routed by its stamp, any other event by what its data names). The list above
 * is the consumers' type; a type it names that no process follows, or one a process follows that it does not name,
 * is refused at start.
 */
export function orderConsumers(
  processes: Pick<ProcessManager, 'handlers'>,
  options?: OrderConsumersOptions,
): AnyServiceConsumer<OrderEventType>[] {
  const handlers = processes.handlers()
  const followed = Object.keys(handlers).sort()
  const listed = [...orderEventTypes].sort()
  if (followed.join() !== listed.join()) {
    throw new Error(
      `the order service's processes follow ${followed.join(', ')}; its consumers list ${listed.join(', ')}`,
    )
  }
  return consumersOf(consumerGroup, handlers as ConsumerHandlers<OrderEventType>, options)
}
