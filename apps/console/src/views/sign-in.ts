// Signing in: Meridian's own OpenID Connect provider (authorization code with PKCE), or the login form.
import { type Session, signInWithPassword, startOpenIdSignIn } from '../session.ts'
import { busy, h, show, submitWith } from '../ui.ts'

export function signInView(onSignedIn: (session: Session) => void): HTMLElement {
  const errors = h('div', { 'aria-live': 'assertive' })
  const email = h('input', {
    id: 'email',
    name: 'email',
    type: 'email',
    autocomplete: 'username',
    required: true,
  })
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  })
  const submit = h('button', { type: 'submit' }, 'Sign in')
  const form = h(
    'form',
    {
      'aria-labelledby': 'sign-in-title',
      onsubmit: submitWith(submit, errors, async () =>
        onSignedIn(await signInWithPassword(email.value, password.value)),
      ),
    },
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password'),
    password,
    submit,
  )
  const openId = h('button', { type: 'button', class: 'secondary' }, 'Sign in with Meridian (OpenID Connect)')
  openId.addEventListener('click', () => void busy(openId, errors, startOpenIdSignIn))
  return h(
    'section',
    { class: 'panel sign-in' },
    h('h1', { id: 'sign-in-title' }, 'Sign in to Meridian'),
    openId,
    h('p', { class: 'or' }, 'or with your email and password'),
    form,
    errors,
  )
}

/** Shown while the provider's redirect is turned into a session. */
export function completingView(): HTMLElement {
  const view = h('section', { class: 'panel' })
  show(view, h('p', { role: 'status' }, 'Completing the sign-in…'))
  return view
}
