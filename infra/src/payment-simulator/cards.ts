// Card numbers as the simulator sees them: Luhn validity, the brand, and which test card a number is. A full number
// never leaves this module: callers keep the brand, the last four digits and the behaviour (see README.md).
//
// Test cards (any future expiry, any 3–4 digit CVC; spaces and dashes in the number are ignored):
//   4242424242424242  succeeds
//   4000000000000077  succeeds after a delay (delayMs, 2000 ms by default, under the 5 s a client waits)
//   4000000000000002  declined: 402 {error: {code: 'card_declined', message: 'Your card was declined.'}}
//   4000000000009995  rate limited: 429 with Retry-After: 30
//   4000000000000119  provider error: 500 (never stored for idempotency: a retry with the same key runs again)
//   4000000000000259  hangs past a 5 s client timeout: answers (and charges) after hangMs, 8000 ms by default
//   any other Luhn-valid number succeeds

export type CardBehavior = 'succeed' | 'delay' | 'decline' | 'rate_limit' | 'provider_error' | 'hang'

export const testCards: Readonly<Record<string, CardBehavior>> = {
  '4242424242424242': 'succeed',
  '4000000000000077': 'delay',
  '4000000000000002': 'decline',
  '4000000000009995': 'rate_limit',
  '4000000000000119': 'provider_error',
  '4000000000000259': 'hang',
}

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown'

/** What is kept of a card: never its number. */
export interface CardSummary {
  brand: CardBrand
  last4: string
  behavior: CardBehavior
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
  return { brand: brandOf(digits), last4: digits.slice(-4), behavior: testCards[digits] ?? 'succeed' }
}
