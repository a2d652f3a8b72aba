// A forgotten password, for a visitor who cannot sign in: "Forgot password?" asks for a link by address
// (POST /api/v1/password-resets, 202 whether or not an account has it, so the page says the same either way), and the
// link of the mail opens #/reset-password/<token>, where a new password is set (POST /api/v1/password-resets/{token}).
// The token is in the URL's fragment, which the browser never sends: no server logs it.
import { api } from '../api.ts'
import { h, show, submitWith } from '../ui.ts'
import { forgetLinkToken, linkTokenOf } from './link-token.ts'

export const forgotPasswordHash = '#/forgot-password'
export const resetPasswordPrefix = '#/reset-password/'
/** what the console's sign-in page is: any hash that is no page of its own */
const signInHash = '#/'

/** The same answer for every address: whether an account has it is not told. */
export const resetRequestedMessage =
  'If an account has this address, a link to reset its password is on its way.'

const signInLink = (text: string): HTMLElement => h('a', { href: signInHash }, text)

export function forgotPasswordView(): HTMLElement {
  const view = h('section', { class: 'panel sign-in', 'aria-labelledby': 'forgot-title' })
  const errors = h('div', { 'aria-live': 'assertive' })
  const sent = h('div', { role: 'status', 'aria-live': 'polite' })
  const email = h('input', {
    id: 'reset-email',
    name: 'email',
    type: 'email',
    required: true,
    autocomplete: 'username',
  })
  const submit = h('button', { type: 'submit' }, 'Send me a link')
  const form = h(
    'form',
    {
      'aria-labelledby': 'forgot-title',
      onsubmit: submitWith(submit, errors, async () => {
        show(sent)
        await api('POST', '/api/v1/password-resets', { body: { email: email.value } })
        show(sent, h('p', {}, resetRequestedMessage))
      }),
    },
    h('label', { for: 'reset-email' }, 'Email'),
    email,
    submit,
  )
  show(
    view,
    h('h1', { id: 'forgot-title' }, 'Forgot your password?'),
    h(
      'p',
      { class: 'or' },
      'Give the address of your account: a link to choose a new password is mailed to it.',
    ),
    form,
    errors,
    sent,
    h('p', { class: 'or' }, signInLink('Back to sign in')),
  )
  return view
}

function passwordField(id: string, label: string) {
  const input = h('input', {
    id,
    name: id,
    type: 'password',
    required: true,
    autocomplete: 'new-password',
    minlength: 8,
    maxlength: 200,
  })
  return { input, nodes: [h('label', { for: id }, label), input] }
}

/** After a reset: every session of the account has ended, so the way on is signing in with the new password. */
function changedView(view: HTMLElement): void {
  forgetLinkToken()
  show(
    view,
    h('h1', { id: 'reset-title', tabindex: -1 }, 'Your password was changed'),
    h(
      'p',
      { role: 'status' },
      'Your password was changed, and every session of your account was signed out. Sign in with the new password.',
    ),
    h('p', {}, signInLink('Sign in')),
  )
  view.querySelector('h1')?.focus()
}

export function resetPasswordView(token: string): HTMLElement {
  const view = h('section', { class: 'panel sign-in', 'aria-labelledby': 'reset-title' })
  const errors = h('div', { 'aria-live': 'assertive' })
  const password = passwordField('reset-password', 'New password (at least 8 characters)')
  const again = passwordField('reset-password-again', 'The same password again')
  const submit = h('button', { type: 'submit' }, 'Set the new password')
  const form = h(
    'form',
    {
      'aria-labelledby': 'reset-title',
      onsubmit: submitWith(submit, errors, async () => {
        if (password.input.value !== again.input.value)
          throw new Error('The two passwords differ: type them again')
        await api('POST', `/api/v1/password-resets/${encodeURIComponent(token)}`, {
          body: { password: password.input.value },
        })
        changedView(view)
      }),
    },
    ...password.nodes,
    ...again.nodes,
    submit,
  )
  show(
    view,
    h('h1', { id: 'reset-title' }, 'Choose a new password'),
    form,
    errors,
    h(
      'p',
      { class: 'or' },
      'The link no longer works? ',
      h('a', { href: forgotPasswordHash }, 'Ask for a new one'),
    ),
  )
  return view
}

/** The page a visitor who is not signed in reaches by the hash (#/forgot-password, #/reset-password/<token>), if any. */
export function passwordPageOf(hash: string): HTMLElement | undefined {
  if (hash === forgotPasswordHash) return forgotPasswordView()
  const token = linkTokenOf(hash, resetPasswordPrefix)
  return token === undefined ? undefined : resetPasswordView(token)
}
