// Typed consumers: a handler receives the data of its catalogue type; a handler of another type, or a type outside
// the catalogue, does not compile. The `@ts-expect-error` lines and the expectTypeOf assertions are checked by `tsc`
// (the package's typecheck covers test/): each `@ts-expect-error` fails it if its line ever compiles. At run time
// vitest calls the helper and a handler for real; nothing here needs Kafka or a database.
import type { EventData, EventType } from '@meridian/contracts'
import type { Sql, TransactionSql } from '@meridian/db'
import type { Kafka } from 'kafkajs'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { type ConsumeContext, type ConsumeOptions, consume, type EventHandler } from '../src/consumer.ts'
import type { ConsumerLogger } from '../src/consumer-logger.ts'
import { type CatalogueEvent, createEvent, type DomainEvent } from '../src/envelope.ts'
import {
  type AnyServiceConsumer,
  consumer,
  type EventsPluginOptions,
  type ServiceConsumer,
} from '../src/events-plugin.ts'

// What consume() needs beside the typed part; only ever used inside functions that are not called.
declare const kafka: Kafka
declare const sql: Sql
declare const logger: ConsumerLogger

const chargeOrder: EventHandler<'order.placed'> = async (event) => {
  expectTypeOf(event.data.total).toEqualTypeOf<number>()
}

describe('typed consumers', () => {
  it('when a consumer is of user.registered, then its handler receives user.registered data and type', async () => {
    const seen: string[] = []
    const welcome = consumer({
      type: 'user.registered',
      group: 'notification',
      handler: async (event) => {
        expectTypeOf(event).toEqualTypeOf<CatalogueEvent<'user.registered'>>()
        expectTypeOf(event.type).toEqualTypeOf<'user.registered'>()
        expectTypeOf(event.data).toEqualTypeOf<EventData<'user.registered'>>()
        expectTypeOf(event.data.userId).toBeString()
        // @ts-expect-error user.registered data has no orderId
        void event.data.orderId
        seen.push(event.data.userId)
      },
      afterCommit: (event) => {
        expectTypeOf(event.data.email).toBeString()
      },
    })
    expectTypeOf(welcome).toEqualTypeOf<ServiceConsumer<'user.registered'>>()

    const data = { userId: crypto.randomUUID(), email: 'ada@example.com', name: 'Ada', role: 'user' }
    const event = createEvent('user.registered', data, { source: 'consumer-types-test' })
    const context: ConsumeContext = { topic: 'user.registered', partition: 0, offset: '0', attempt: 1 }
    // the handler writes nothing, so it is given no transaction
    await welcome.handler(event, undefined as never, context)
    expect(seen).toEqual([data.userId])
  })

  it('when a handler of order.placed is given to a consumer of user.registered, then it does not compile', () => {
    expectTypeOf<EventHandler<'order.placed'>>().not.toExtend<EventHandler<'user.registered'>>()
    expectTypeOf<EventHandler<'order.placed'>>().toExtend<EventHandler<'order.placed'>>()

    const compileOnly = () => [
      consume({
        kafka,
        sql,
        logger,
        type: 'user.registered',
        group: 'notification',
        // @ts-expect-error a handler of order.placed is not a handler of user.registered
        handler: chargeOrder,
      }),
      consumer({
        type: 'user.registered',
        group: 'notification',
        // @ts-expect-error the same through the plugin's helper
        handler: chargeOrder,
      }),
      // the handler does not decide the type: `type` does
      consume({ kafka, sql, logger, type: 'order.placed', group: 'payment', handler: chargeOrder }),
    ]
    expect(compileOnly).toBeTypeOf('function')
  })

  it('when a type is outside the catalogue, then it does not compile', () => {
    expectTypeOf<'no.such.event'>().not.toExtend<EventType>()
    expectTypeOf<ConsumeOptions<'order.placed'>['type']>().toEqualTypeOf<'order.placed'>()

    const compileOnly = () => [
      consume({
        kafka,
        sql,
        logger,
        // @ts-expect-error not a catalogue event type
        type: 'no.such.event',
        group: 'nobody',
        handler: async () => {},
      }),
      // @ts-expect-error the same through the plugin's helper
      consumer({ type: 'no.such.event', group: 'nobody', handler: async () => {} }),
    ]
    expect(compileOnly).toBeTypeOf('function')
  })

  it('when consumers of different types share one consumers list, then each element keeps its own type', () => {
    const consumers: EventsPluginOptions['consumers'] = [
      consumer({ type: 'order.placed', group: 'payment', handler: chargeOrder }),
      consumer({
        type: 'payment.failed',
        group: 'order',
        handler: async (event) => {
          expectTypeOf(event.data.reason).toBeString()
        },
      }),
      // an object literal is typed by its `type` too
      {
        type: 'user.registered',
        group: 'notification',
        handler: async (event) => {
          expectTypeOf(event.data.userId).toBeString()
        },
      },
      // a handler of any envelope fits every type
      consumer({ type: 'shipment.created', group: 'audit', handler: async (_event: DomainEvent) => {} }),
    ]
    expect(consumers?.map((each) => each.type)).toEqual([
      'order.placed',
      'payment.failed',
      'user.registered',
      'shipment.created',
    ])
    expectTypeOf(consumer({ type: 'order.placed', group: 'payment', handler: chargeOrder })).toExtend<
      AnyServiceConsumer<'order.placed'>
    >()

    const wrong: AnyServiceConsumer[] = [
      // @ts-expect-error an element whose handler is of another type than its own
      { type: 'user.registered', group: 'notification', handler: chargeOrder },
    ]
    expect(wrong).toHaveLength(1)
  })

  it('when a service consumer is made with consumer(), then it is the options given', () => {
    const options: ServiceConsumer<'order.placed'> = {
      type: 'order.placed',
      group: 'payment',
      handler: chargeOrder,
    }
    expect(consumer(options)).toBe(options)
    expectTypeOf<Parameters<EventHandler<'order.placed'>>[1]>().toEqualTypeOf<TransactionSql>()
  })
})
