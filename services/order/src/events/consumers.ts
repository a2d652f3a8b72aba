// Order's consumers: its processes (the order saga, returns) follow every answer of payment, inventory and shipping.
// Each event is routed by the process module to the instance it names and applied in the consumer's transaction (the
// one that records the event in the inbox), so the instance, the order's status, the step log and the commands
// commit together with the event's record.
import type { EventType } from '@meridian/contracts'
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
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
  'payment.refund_failed',
  'inventory.reserved',
  'inventory.failed',
  'inventory.released',
  'inventory.restocked',
  'shipment.created',
  'shipment.delivered',
] as const satisfies readonly EventType[]
export type OrderEventType = (typeof orderEventTypes)[number]

export type OrderConsumersOptions = ConsumersOptions<OrderEventType>

/** What the app's event backbone runs: a consumer of each answer, handled by the processes that declare it. */
export function orderConsumers(
  processes: Pick<ProcessManager, 'handlers'>,
  options?: OrderConsumersOptions,
): AnyServiceConsumer<OrderEventType>[] {
  const handlers = processes.handlers()
  const handle = <Type extends OrderEventType>(type: Type): EventHandler<Type> => {
    const handler = handlers[type]
    if (!handler) throw new Error(`no process of the order service follows ${type}`)
    return handler as EventHandler<Type>
  }
  return consumersOf(
    consumerGroup,
    {
      'payment.processed': handle('payment.processed'),
      'payment.action_required': handle('payment.action_required'),
      'payment.failed': handle('payment.failed'),
      'payment.refunded': handle('payment.refunded'),
      'payment.refund_failed': handle('payment.refund_failed'),
      'inventory.reserved': handle('inventory.reserved'),
      'inventory.failed': handle('inventory.failed'),
      'inventory.released': handle('inventory.released'),
      'inventory.restocked': handle('inventory.restocked'),
      'shipment.created': handle('shipment.created'),
      'shipment.delivered': handle('shipment.delivered'),
    },
    options,
  )
}
