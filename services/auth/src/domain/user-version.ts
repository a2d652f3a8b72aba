// Entity tags of a user and the If-Match / If-None-Match rules that use them.
import { AppError } from '@meridian/contracts'

/** A strong ETag that changes with every update of the user. */
export const userETag = (id: string, version: number): string => `"${id}.${version}"`

const listed = (header: string) => header.split(',').map((tag) => tag.trim().replace(/^W\//, ''))

/** True when an If-None-Match header matches the current tag: the client's copy is current (304). */
export function isNotModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch.trim() === '*' || listed(ifNoneMatch).includes(etag)
}

/** Throws 412 when an If-Match header does not name the current tag; absent means unconditional. */
export function assertIfMatch(ifMatch: string | undefined, etag: string): void {
  if (!ifMatch || ifMatch.trim() === '*') return
  if (!listed(ifMatch).includes(etag)) {
    throw AppError.preconditionFailed(
      'The user was changed since you read it (If-Match does not match its ETag)',
    )
  }
}
