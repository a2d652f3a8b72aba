// An address proved by a mailed link, for whoever opens it, signed in or not: registration mails one to the new user's
// address, and an address change (the Account page) one to the new address. The link opens #/verify-email/<token> (in
// the URL's fragment: no server receives it); the page uses it once as it opens (POST
// /api/v1/email-verifications/{token}), says what came of it, and leads on: to signing in, or, for a user signed in
// already, to the Account page (which then shows the address verified).
import { api } from '../api.ts'
import { errorBox, h, loading, show } from '../ui.ts'
import { forgetLinkToken, linkTokenOf } from './link-token.ts'

export const verifyEmailPrefix = '#/verify-email/'

/** Where the page leads once the link is used. */
export interface Onward {
  href: string
  label: string
}

/** a visitor signs in (with the address just proved, when it was a change) */
export const signInOnward: Onward = { href: '#/', label: 'Sign in' }
/** a user signed in already sees their account */
export const accountOnward: Onward = { href: '#/account', label: 'Go on to your account' }

const onwardLink = ({ href, label }: Onward): HTMLElement => h('p', {}, h('a', { href }, label))

function confirmedView(view: HTMLElement, onward: Onward): void {
  forgetLinkToken()
  show(
    view,
    h('h1', { id: 'verify-title', tabindex: -1 }, 'Your address is confirmed'),
    h(
      'p',
      { role: 'status' },
      "This address is now confirmed as your account's. If you asked to change your address to it, your account " +
        'has it from now on: sign in with it.',
    ),
    onwardLink(onward),
  )
  view.querySelector('h1')?.focus()
}

/** The API's refusal (a link used, expired or superseded) as it says it; the token stays, so a reload tries again. */
function refusedView(view: HTMLElement, error: unknown, onward: Onward): void {
  show(
    view,
    h('h1', { id: 'verify-title', tabindex: -1 }, 'This link does not work'),
    errorBox(error),
    h(
      'p',
      { class: 'or' },
      'A link works once, for a limited time, and a newer one of the same kind ends it. ' +
        'To change your address, ask again on your Account page.',
    ),
    onwardLink(onward),
  )
  view.querySelector('h1')?.focus()
}

export function verifyEmailView(token: string, onward: Onward): HTMLElement {
  const view = h('section', { class: 'panel sign-in', 'aria-labelledby': 'verify-title' })
  show(view, h('h1', { id: 'verify-title' }, 'Confirming your address'), loading('the confirmation'))
  api('POST', `/api/v1/email-verifications/${encodeURIComponent(token)}`)
    .then(() => confirmedView(view, onward))
    .catch((error: unknown) => refusedView(view, error, onward))
  return view
}

/** The page of the hash, #/verify-email/<token>, if it is that one; `onward` is where it then leads. */
export function verifyPageOf(hash: string, onward: Onward): HTMLElement | undefined {
  const token = linkTokenOf(hash, verifyEmailPrefix)
  return token === undefined ? undefined : verifyEmailView(token, onward)
}
