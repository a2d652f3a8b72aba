// The templates: every one renders from its data, text as written and HTML escaped; money as the contracts' Money
// says; how long a link works as a person reads it; data read back from storage is checked before it is rendered.
import { describe, expect, it } from 'vitest'
import {
  escapeHtml,
  formatDuration,
  formatLineTotal,
  formatMoney,
  html,
  mailTemplates,
  renderStoredTemplate,
  renderTemplate,
  type TemplateData,
  type TemplateName,
  templateNames,
} from '../src/index.ts'

const samples: { [Name in TemplateName]: TemplateData<Name> } = {
  order_placed: {
    orderId: 'ord-1',
    items: [
      { name: 'Mug', quantity: 2, price: 12.5 },
      { name: 'Tea', quantity: 1, price: 0.99 },
    ],
    total: 25.99,
  },
  order_paid: { orderId: 'ord-1', total: 25.99 },
  payment_failed: { orderId: 'ord-1', reason: 'Your card was declined.' },
  shipment_created: { orderId: 'ord-1', carrier: 'DHL', trackingNumber: 'TRK-1' },
  shipment_delivered: { orderId: 'ord-1', deliveredOn: '2026-05-01' },
  return_requested: {
    returnId: 'ret-1',
    orderId: 'ord-1',
    items: [{ name: 'Mug', quantity: 1 }],
    refundAmount: 12.5,
  },
  return_received: { returnId: 'ret-1', orderId: 'ord-1', units: 1 },
  return_completed: { returnId: 'ret-1', orderId: 'ord-1', refundAmount: 12.5 },
  return_rejected: { returnId: 'ret-1', orderId: 'ord-1', reason: 'past the return window' },
  exchange_requested: {
    exchangeId: 'exc-1',
    orderId: 'ord-1',
    items: [{ name: 'Mug', quantity: 2, replacementName: 'Large mug' }],
    charge: 5,
    refund: 0,
  },
  exchange_awaiting_goods: { exchangeId: 'exc-1', orderId: 'ord-1', units: 2 },
  exchange_completed: { exchangeId: 'exc-1', orderId: 'ord-1', charge: 0, refund: 4.5 },
  exchange_failed: { exchangeId: 'exc-1', orderId: 'ord-1', reason: 'the replacement is out of stock' },
  welcome: { name: 'Ada' },
  password_reset: { resetUrl: 'https://shop.example/reset?t=abc', expiresInMinutes: 30 },
  verify_address: { verifyUrl: 'https://shop.example/verify?t=abc', expiresInMinutes: 60 },
  password_changed: { changedAt: '2026-05-01T10:00:00.000Z' },
  address_change_requested: { requestedAt: '2026-05-01T10:00:00.000Z' },
}

describe('mail templates', () => {
  it('when every template is rendered from its data, then each has a subject, a text and an HTML body', () => {
    for (const name of templateNames) {
      const rendered = renderStoredTemplate(name, samples[name])
      expect(rendered.subject, name).not.toBe('')
      expect(rendered.text.endsWith('\n'), name).toBe(true)
      expect(rendered.html, name).toMatch(/^<!doctype html>/)
      expect(rendered.html, name).toContain('</body>')
    }
  })

  it('when a product is named <script>, then the HTML shows it escaped and the text as it is', () => {
    const name = '<script>alert("x")</script> & <b>'
    const rendered = renderTemplate('order_placed', {
      orderId: 'ord-<1>',
      items: [{ name, quantity: 1, price: 5 }],
      total: 5,
    })
    expect(rendered.html).not.toContain('<script>')
    expect(rendered.html).not.toContain('<b>')
    expect(rendered.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;')
    expect(rendered.html).toContain('ord-&lt;1&gt;')
    expect(rendered.text).toContain(`1 × ${name} at $5.00: $5.00`)
    expect(rendered.subject).toBe('Order ord-<1> placed')
  })

  it('when an order is placed, then its lines, quantities, prices, line amounts and total are in both bodies', () => {
    const rendered = renderTemplate('order_placed', samples.order_placed)
    expect(rendered.text).toContain('- 2 × Mug at $12.50: $25.00')
    expect(rendered.text).toContain('- 1 × Tea at $0.99: $0.99')
    expect(rendered.text).toContain('Total: $25.99')
    expect(rendered.html).toContain('<td>Mug</td><td style="text-align: right">2</td>')
    expect(rendered.html).toContain('$25.99')
  })

  it("when an exchange's mails are rendered, then each line with its replacement, and the price difference charged, refunded or none", () => {
    const requested = renderTemplate('exchange_requested', samples.exchange_requested)
    expect(requested.text).toContain('A price difference of $5.00 will be charged.')
    expect(requested.text).toContain('- 2 × Mug for Large mug')
    expect(requested.html).toContain('<li>2 × Mug for Large mug</li>')
    const falling = renderTemplate('exchange_requested', {
      ...samples.exchange_requested,
      charge: 0,
      refund: 4.5,
    })
    expect(falling.text).toContain(
      'A price difference of $4.50 will be refunded once your items are received.',
    )
    const even = renderTemplate('exchange_requested', { ...samples.exchange_requested, charge: 0 })
    expect(even.text).toContain('There is no price difference.')
    expect(renderTemplate('exchange_completed', samples.exchange_completed).text).toContain(
      'the replacements are on their way. $4.50 was refunded.',
    )
    expect(renderTemplate('exchange_awaiting_goods', samples.exchange_awaiting_goods).text).toContain(
      'Please send the 2 items back',
    )
    expect(renderTemplate('exchange_failed', samples.exchange_failed).text).toContain(
      'could not be completed: the replacement is out of stock\n\nNothing is charged for it',
    )
  })

  it('when a security mail is rendered, then it is of kind security and its link is an attribute that cannot be left', () => {
    const rendered = renderTemplate('password_reset', {
      resetUrl: 'https://shop.example/reset?t=a"onmouseover="x',
      expiresInMinutes: 30,
    })
    expect(rendered.kind).toBe('security')
    expect(rendered.html).toContain('href="https://shop.example/reset?t=a&quot;onmouseover=&quot;x"')
    expect(mailTemplates.verify_address.kind).toBe('security')
    expect(mailTemplates.password_changed.kind).toBe('security')
    expect(mailTemplates.address_change_requested.kind).toBe('security')
    expect(mailTemplates.order_placed.kind).toBe('notification')
  })

  it('when a duration is rendered, then minutes under 2 hours, hours under 2 days, else days, never more than it is', () => {
    const said = [1, 30, 119, 120, 150, 1440, 2879, 2880, 4320, 10_080].map(formatDuration)
    expect(said).toEqual([
      '1 minute',
      '30 minutes',
      '119 minutes',
      '2 hours',
      '2 hours',
      '24 hours',
      '47 hours',
      '2 days',
      '3 days',
      '7 days',
    ])
  })

  it('when a link mail is rendered, then it says how long the link works in that unit', () => {
    const verify = renderTemplate('verify_address', {
      verifyUrl: 'https://shop.example/verify?t=abc',
      expiresInMinutes: 1440,
    })
    expect(verify.text).toContain('The link works for 24 hours:')
    expect(verify.html).toContain('The link works for 24 hours:')
    expect(verify.text).not.toContain('1440')
    const reset = renderTemplate('password_reset', {
      resetUrl: 'https://shop.example/reset?t=abc',
      expiresInMinutes: 30,
    })
    expect(reset.text).toContain('The link works once, for 30 minutes:')
  })

  it('when stored data does not match its template, or the name is no template, then rendering refuses it', () => {
    expect(() => renderStoredTemplate('order_placed', { orderId: 'o', items: [], total: 1 })).toThrow(
      /order_placed.*invalid/,
    )
    expect(() =>
      renderStoredTemplate('password_reset', { resetUrl: 'javascript:alert(1)', expiresInMinutes: 5 }),
    ).toThrow(TypeError)
    expect(() => renderStoredTemplate('no_such_mail', {})).toThrow(/no mail template is named 'no_such_mail'/)
  })
})

describe('money and escaping', () => {
  it('when amounts are formatted, then they are dollars with two decimals and a line total is exact', () => {
    expect(formatMoney(1234.5)).toBe('$1,234.50')
    expect(formatMoney(0)).toBe('$0.00')
    expect(formatLineTotal(19.99, 3)).toBe('$59.97')
    expect(formatLineTotal(0.1, 3)).toBe('$0.30')
    expect(() => formatMoney(0.001)).toThrow(RangeError)
    expect(() => formatMoney(-1)).toThrow(RangeError)
  })

  it('when text and markup are interpolated, then text is escaped, markup and lists of markup are not', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
    const items = ['<i>', 'b&c']
    expect(
      html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>${null}${undefined}${false}${3}`.toString(),
    ).toBe('<ul><li>&lt;i&gt;</li><li>b&amp;c</li></ul>3')
  })
})
