// The headers: a Message-ID that follows from the idempotency key, List-Unsubscribe (link, then mailto when configured)
// with RFC 8058's one-click List-Unsubscribe-Post on every mail that is not a security mail.
import { describe, expect, it } from 'vitest'
import { composeMail, listUnsubscribeHeaders, messageIdFor, renderTemplate } from '../src/index.ts'

const from = 'Meridian <no-reply@Shop.Example>'
const unsubscribe = { url: 'https://shop.example/api/v1/notifications/unsubscribe', token: 'abc.def' }

describe('Message-ID', () => {
  it('when the same key is used twice, then the id is the same; another key gives another id', () => {
    const first = messageIdFor('notification:1', from)
    expect(first).toMatch(/^<[0-9a-f]{40}\.meridian@shop\.example>$/)
    expect(messageIdFor('notification:1', from)).toBe(first)
    expect(messageIdFor('notification:2', from)).not.toBe(first)
    expect(messageIdFor('notification:1', 'other@else.example')).toBe(
      first.replace('shop.example', 'else.example'),
    )
  })
})

describe('List-Unsubscribe', () => {
  it('when no mailto is configured, then the header is the https link alone, with the one-click post', () => {
    expect(listUnsubscribeHeaders(unsubscribe)).toEqual({
      'List-Unsubscribe': '<https://shop.example/api/v1/notifications/unsubscribe?token=abc.def>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    })
  })

  it('when a mailto is configured, then it follows the link', () => {
    const headers = listUnsubscribeHeaders({ ...unsubscribe, mailto: 'unsubscribe@shop.example' })
    expect(headers['List-Unsubscribe']).toBe(
      '<https://shop.example/api/v1/notifications/unsubscribe?token=abc.def>, <mailto:unsubscribe@shop.example?subject=unsubscribe%20abc.def>',
    )
  })
})

describe('composeMail', () => {
  it('when a notification mail is composed, then it has the headers, the Message-ID and the link in both bodies', () => {
    const mail = composeMail({
      from,
      to: 'ada@example.com',
      rendered: renderTemplate('order_paid', { orderId: 'o-1', total: 3 }),
      idempotencyKey: 'notification:1',
      unsubscribe,
    })
    expect(mail.messageId).toBe(messageIdFor('notification:1', from))
    expect(mail.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click')
    expect(mail.text).toContain('?token=abc.def')
    expect(mail.html).toMatch(
      /<a href="https:\/\/shop\.example\/api\/v1\/notifications\/unsubscribe\?token=abc\.def">[^<]+<\/a>.*\n<\/body>/s,
    )
  })

  it('when a security mail is composed, then it has no List-Unsubscribe and no unsubscribe line', () => {
    const mail = composeMail({
      from,
      to: 'ada@example.com',
      rendered: renderTemplate('password_changed', { changedAt: '2026-05-01T10:00:00.000Z' }),
      idempotencyKey: 'password-changed:1',
      unsubscribe,
    })
    expect(mail.headers).toEqual({})
    expect(mail.text).not.toContain('token=')
  })

  it('when a notification mail has no unsubscribe link, then it is refused', () => {
    expect(() =>
      composeMail({
        from,
        to: 'ada@example.com',
        rendered: renderTemplate('welcome', { name: 'Ada' }),
        idempotencyKey: 'k',
      }),
    ).toThrow(/needs its unsubscribe link/)
  })
})
