// Amounts as a mail shows them: the contracts' Money (major units, at most two decimals) in the shop's currency, and a
// line's total computed in integer minor units (never a float product).
import { fromMinorUnits, toMinorUnits } from '@meridian/contracts'

/** The currency amounts are in: Meridian charges in US dollars only for now (contracts' PaymentCurrency). */
export const mailCurrency = 'USD'

const formatter = new Intl.NumberFormat('en-US', { style: 'currency', currency: mailCurrency })

/** The integer cents of an amount; a RangeError when it is not a Money amount (a producer's bug, never rounded away). */
function centsOf(amount: number): number {
  const cents = toMinorUnits(amount)
  if (cents === undefined) throw new RangeError(`not an amount of money: ${String(amount)}`)
  return cents
}

/** An amount of Money as text: 1234.5 -> "$1,234.50". */
export const formatMoney = (amount: number): string => formatter.format(fromMinorUnits(centsOf(amount)))

/** A line's total, price × quantity, in exact cents: (19.99, 3) -> "$59.97". */
export const formatLineTotal = (price: number, quantity: number): string =>
  formatter.format(fromMinorUnits(centsOf(price) * quantity))
