// Card numbers as the simulator sees them: Luhn validity, the brand, and which test card a number is. A full number
// never leaves this module: callers keep the brand, the last four digits and the behaviour (see README.md).
//
// Stripe's own test numbers answer as Stripe's do (stripeTestCards), any future expiry and any 3–4 digit CVC, spaces
// and dashes ignored; the simulator adds its own: 4000000000000077 succeeds after delayMs (2000 ms by default, under
// the 5 s a client waits), 4000000000000259 hangs past a 5 s client timeout (answers, and charges, after hangMs, 8000
// ms by default), 4000000000000119 answers 500 (never kept for an idempotency key) and 4000000000000341 429. Any other
// Luhn-valid number succeeds.

/** How a card answers a payment (a PaymentIntent confirmed with it). */
export type StripeCardBehavior =
  | 'succeed'
  | 'delay'
  | 'hang'
  | 'provider_error'
  | 'rate_limit'
  | 'generic_decline'
  | 'insufficient_funds'
  | 'three_d_secure'
  /** succeeds, then the customer's bank disputes the charge (product_not_received), as Stripe's dispute cards do */
  | 'dispute'

/** Stripe's test numbers (https://docs.stripe.com/testing) and the simulator's own. */
export const stripeTestCards: Readonly<Record<string, StripeCardBehavior>> = {
  '4242424242424242': 'succeed',
  '5555555555554444': 'succeed',
  '4000000000000002': 'generic_decline',
  '4000000000009995': 'insufficient_funds',
  '4000002760003184': 'three_d_secure',
  '4000000000003220': 'three_d_secure',
  '4000000000002685': 'dispute',
  '4000000000000077': 'delay',
  '4000000000000259': 'hang',
  '4000000000000119': 'provider_error',
  '4000000000000341': 'rate_limit',
}

/** Stripe's test PaymentMethod ids, usable as `payment_method` directly: the card each one stands for. */
export const testPaymentMethods: Readonly<Record<string, string>> = {
  pm_card_visa: '4242424242424242',
  pm_card_mastercard: '5555555555554444',
  pm_card_chargeDeclined: '4000000000000002',
  pm_card_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_authenticationRequired: '4000002760003184',
  pm_card_threeDSecure2Required: '4000000000003220',
  pm_card_createDisputeProductNotReceived: '4000000000002685',
}

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown'

/** What is kept of a card: never its number. */
export interface CardSummary {
  brand: CardBrand
  last4: string
  /** how a payment with it answers */
  behavior: StripeCardBehavior
}

/** The digits of a number as typed (spaces and dashes dropped), or undefined when it holds anything else. */
export function cardDigits(number: string): string | undefined {
  const digits = number.replace(/[\s-]/g, '')
  return /^\d{12,19}$/.test(digits) ? digits : undefined
}

export function luhnValid(digits: string): boolean {
  let sum = 0
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index])
    if (index % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

export function brandOf(digits: string): CardBrand {
  if (digits.startsWith('4')) return 'visa'
  if (/^3[47]/.test(digits)) return 'amex'
  if (/^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/.test(digits)) return 'mastercard'
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover'
  return 'unknown'
}

/** The summary of a Luhn-valid number, or undefined when the number is not one. */
export function summarizeCard(number: string): CardSummary | undefined {
  const digits = cardDigits(number)
  if (!digits || !luhnValid(digits)) return undefined
  return {
    brand: brandOf(digits),
    last4: digits.slice(-4),
    behavior: stripeTestCards[digits] ?? 'succeed',
  }
}
