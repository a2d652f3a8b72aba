import { describe, expect, it } from 'vitest'
import { createEvent, InvalidEventError, parseEvent } from '../src/envelope.ts'
import { newEventId } from '../src/event-id.ts'

describe('event envelope', () => {
  it('when an event is created, then it carries a v7 id, the type, source, version and time, and parses back', () => {
    const event = createEvent(
      'payment.failed',
      { orderId: 'o-1', reason: 'card declined' },
      { source: 'payment' },
    )
    expect(event.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(event).toMatchObject({ type: 'payment.failed', source: 'payment', schemaVersion: '1.0.0' })
    expect(parseEvent(JSON.stringify(event))).toEqual(event)
  })

  it('when ids are made one after another, then they sort in creation order', () => {
    const ids = [newEventId(1_700_000_000_000), newEventId(1_700_000_000_001), newEventId(1_700_000_000_500)]
    expect([...ids].sort()).toEqual(ids)
  })

  it('when data breaks its schema, the type is unknown, or the value is not an envelope, then InvalidEventError', () => {
    expect(() => createEvent('payment.failed', { orderId: 'o-1' } as never, { source: 'payment' })).toThrow(
      InvalidEventError,
    )
    const good = createEvent('order.completed', { orderId: 'o-2' }, { source: 'order' })
    expect(() => parseEvent(JSON.stringify({ ...good, type: 'order.exploded' }))).toThrow(
      /unknown event type/,
    )
    expect(() => parseEvent('{"hello":')).toThrow(/not JSON/)
    expect(() => parseEvent(JSON.stringify({ id: 'x' }))).toThrow(/not an event envelope/)
    expect(() => parseEvent(null)).toThrow(/empty/)
  })
})
