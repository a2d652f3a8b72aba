// Entity tags of a product and the If-Match / If-None-Match rules that use them.
import { AppError } from '@meridian/contracts'

/** A strong ETag that changes with every change of the product, its stock included. */
export const productETag = (id: string, version: number): string => `"${id}.${version}"`

const listed = (header: string) => header.split(',').map((tag) => tag.trim().replace(/^W\//, ''))

/** True when an If-None-Match header matches the current tag: the client's copy is current (304). */
export function isNotModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch.trim() === '*' || listed(ifNoneMatch).includes(etag)
}

/** Whether an If-Match header asks for a condition at all (absent and `*` change unconditionally). */
export const isConditional = (ifMatch: string | undefined): ifMatch is string =>
  ifMatch !== undefined && ifMatch.trim() !== '' && ifMatch.trim() !== '*'

/** Throws 412 when an If-Match header does not name the current tag; absent means unconditional. */
export function assertIfMatch(ifMatch: string | undefined, etag: string): void {
  if (!isConditional(ifMatch)) return
  if (!listed(ifMatch).includes(etag)) {
    throw AppError.preconditionFailed(
      'The product was changed since you read it (If-Match does not match its ETag)',
    )
  }
}
