// The carrier shipments go with, and the tracking numbers it gives them.
import { randomInt } from 'node:crypto'

/** The one carrier for now: Meridian's own post. */
export const carrierName = 'meridian-post'

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const trackingLength = 12

/**
 * `MP` and 12 random digits or capital letters (36^12, about 4.7 * 10^18 numbers), from the CSPRNG: a tracking number
 * says nothing about the order and cannot be guessed from another one. The column is unique; a collision fails the
 * transaction, which the consumer's retry runs again with a new number.
 */
export function newTrackingNumber(): string {
  let number = 'MP'
  for (let index = 0; index < trackingLength; index += 1) number += alphabet[randomInt(alphabet.length)]
  return number
}
