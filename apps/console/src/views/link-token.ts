// The token of a mailed link's page (#/reset-password/<token>, #/verify-email/<token>): what follows the page's prefix
// in the URL's fragment, which the browser never sends, so no server or proxy logs it; and, once it is used, taking it
// out of the address bar and the history.

/** The token after `prefix` in `hash`, when the hash is that page's and carries one (see tokenOf). */
export function linkTokenOf(hash: string, prefix: string): string | undefined {
  if (!hash.startsWith(prefix)) return undefined
  const token = hash.slice(prefix.length)
  return token === '' ? undefined : tokenOf(token)
}

/** The token as the link carries it; one that is no percent-encoding is kept as it is (the API refuses it). */
function tokenOf(fragment: string): string {
  try {
    return decodeURIComponent(fragment)
  } catch {
    return fragment
  }
}

/** The used token leaves the address bar and the history (no hashchange: the page stays; its links then change it). */
export function forgetLinkToken(): void {
  history.replaceState(null, '', `${location.pathname}${location.search}`)
}
