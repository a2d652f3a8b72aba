// Signing in: Meridian's own OpenID Connect provider (authorization code with PKCE), or the login form; a newcomer
// creates an account here (open registration, POST /api/v1/users) and is signed in with it, and "Forgot password?"
// leads to the page that mails a reset link (password-reset.ts). In development the gateway may give a hint
// (./scripts/dev --demo: the demo accounts), shown above both.
import { registerAndSignIn, type Session, signInWithPassword, startOpenIdSignIn } from '../session.ts'
import { busy, h, show, submitWith } from '../ui.ts'
import { forgotPasswordHash } from './password-reset.ts'

function field(id: string, label: string, attributes: Record<string, string | number | boolean>) {
  const input = h('input', { id, name: id, required: true, ...attributes })
  return { input, nodes: [h('label', { for: id }, label), input] }
}

/** The hint of the deployment (development only), as a note under the title. */
function hintOf(hint: string | undefined): HTMLElement | null {
  return hint ? h('p', { class: 'hint', role: 'note' }, hint) : null
}

function signInForm(onSignedIn: (session: Session) => void, errors: HTMLElement): HTMLElement {
  const email = field('email', 'Email', { type: 'email', autocomplete: 'username' })
  const password = field('password', 'Password', { type: 'password', autocomplete: 'current-password' })
  const submit = h('button', { type: 'submit' }, 'Sign in')
  return h(
    'form',
    {
      'aria-labelledby': 'sign-in-title',
      onsubmit: submitWith(submit, errors, async () =>
        onSignedIn(await signInWithPassword(email.input.value, password.input.value)),
      ),
    },
    ...email.nodes,
    ...password.nodes,
    submit,
  )
}

function registrationForm(onSignedIn: (session: Session) => void, errors: HTMLElement): HTMLElement {
  const name = field('new-name', 'Name', { autocomplete: 'name', maxlength: 100 })
  const email = field('new-email', 'Email', { type: 'email', autocomplete: 'username' })
  const password = field('new-password', 'Password (at least 8 characters)', {
    type: 'password',
    autocomplete: 'new-password',
    minlength: 8,
    maxlength: 200,
  })
  const submit = h('button', { type: 'submit' }, 'Create account')
  return h(
    'form',
    {
      'aria-labelledby': 'register-title',
      onsubmit: submitWith(submit, errors, async () =>
        onSignedIn(await registerAndSignIn(name.input.value, email.input.value, password.input.value)),
      ),
    },
    ...name.nodes,
    ...email.nodes,
    ...password.nodes,
    submit,
  )
}

export function signInView(onSignedIn: (session: Session) => void, hint?: string): HTMLElement {
  const view = h('section', { class: 'panel sign-in' })

  function signIn(): void {
    const errors = h('div', { 'aria-live': 'assertive' })
    const openId = h(
      'button',
      { type: 'button', class: 'secondary' },
      'Sign in with Meridian (OpenID Connect)',
    )
    openId.addEventListener('click', () => void busy(openId, errors, startOpenIdSignIn))
    const create = h('button', { type: 'button', class: 'link', onclick: register }, 'Create an account')
    show(
      view,
      h('h1', { id: 'sign-in-title' }, 'Sign in to Meridian'),
      hintOf(hint),
      openId,
      h('p', { class: 'or' }, 'or with your email and password'),
      signInForm(onSignedIn, errors),
      errors,
      h('p', { class: 'or' }, h('a', { href: forgotPasswordHash }, 'Forgot password?')),
      h('p', { class: 'or' }, 'New here? ', create),
    )
  }

  function register(): void {
    const errors = h('div', { 'aria-live': 'assertive' })
    const back = h('button', { type: 'button', class: 'link', onclick: signIn }, 'Sign in instead')
    show(
      view,
      h('h1', { id: 'register-title', tabindex: -1 }, 'Create an account'),
      h('p', { class: 'or' }, 'A customer account: you can place orders, chat and write at once.'),
      registrationForm(onSignedIn, errors),
      errors,
      h('p', { class: 'or' }, 'Already have one? ', back),
    )
    view.querySelector('h1')?.focus()
  }

  signIn()
  return view
}

/** Shown while the provider's redirect is turned into a session. */
export function completingView(): HTMLElement {
  const view = h('section', { class: 'panel' })
  show(view, h('p', { role: 'status' }, 'Completing the sign-in…'))
  return view
}
