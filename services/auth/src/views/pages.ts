// The few server-rendered pages of sign-in: login, consent, device code, logout, errors. Plain HTML, every value escaped.
import { type ApiScope, apiScopes } from '@meridian/contracts'

/** Headers for every page: no framing (clickjacking of the consent button), no scripts, nothing cached. */
export const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
}

const htmlEscapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export const escapeHtml = (value: unknown): string =>
  String(value ?? '').replace(/[&<>"']/g, (char) => htmlEscapes[char] ?? char)

/** A trusted fragment: built from escaped values only. */
interface Html {
  readonly html: string
}

const raw = (html: string): Html => ({ html })

/** Template tag: interpolated values are escaped unless they are fragments made by this tag. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? ''
  values.forEach((value, index) => {
    const parts = Array.isArray(value) ? value : [value]
    out += parts
      .map((part) =>
        typeof part === 'object' && part !== null && 'html' in part ? part.html : escapeHtml(part),
      )
      .join('')
    out += strings[index + 1] ?? ''
  })
  return raw(out)
}

const style = `body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem}.error{color:#b00020}ul{padding-left:1.2rem}`

export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${raw(style)}</style></head>
<body><h1>${title}</h1>
${body}
</body>
</html>`.html
}

const loginProblems = {
  invalid: 'Invalid email or password.',
  throttled: 'Too many failed sign-in attempts. Try again later.',
}

export function loginPage(input: {
  uid: string
  clientName: string
  email?: string
  problem?: keyof typeof loginProblems
}): string {
  return page(
    'Sign in',
    html`<p>to continue to <strong>${input.clientName}</strong></p>
${input.problem ? html`<p class="error" role="alert">${loginProblems[input.problem]}</p>` : ''}
<form method="post" action="/interaction/${input.uid}/login" autocomplete="on">
<label for="email">Email</label>
<input id="email" name="email" type="email" required autofocus value="${input.email ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="current-password">
<button type="submit">Sign in</button>
</form>
<form method="post" action="/interaction/${input.uid}/abort"><button type="submit">Cancel</button></form>`,
  )
}

const scopeDescriptions: Record<string, string> = {
  openid: 'know who you are',
  profile: 'see your name',
  email: 'see your email address',
  address: 'see your postal address',
  phone: 'see your phone number',
  offline_access: 'stay signed in when you are away (refresh tokens)',
}

/** An API scope as the consent page lists it: its name and what it allows (the catalogue's description). */
const apiScopeItem = (scope: ApiScope) => html`<li><code>${scope}</code>: ${apiScopes[scope]}</li>`

export function consentPage(input: {
  uid: string
  clientName: string
  scopes: string[]
  claims: string[]
  /** the API scopes asked for (resource urn:meridian:api): what the application may do on your behalf */
  apiScopes?: ApiScope[]
}): string {
  const asked = input.apiScopes ?? []
  return page(
    'Allow access?',
    html`<p><strong>${input.clientName}</strong> asks to:</p>
<ul>${input.scopes.map((scope) => html`<li>${scopeDescriptions[scope] ?? scope}</li>`)}</ul>
${asked.length > 0 ? html`<p>and to use Meridian on your behalf, within your own rights:</p><ul>${asked.map(apiScopeItem)}</ul>` : ''}
${input.claims.length > 0 ? html`<p>Claims: ${input.claims.join(', ')}</p>` : ''}
<form method="post" action="/interaction/${input.uid}/confirm"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${input.uid}/abort"><button type="submit">Deny</button></form>`,
  )
}

export const errorPage = (title: string, message: string, code?: string): string =>
  page(title, html`<p>${message}</p>${code ? html`<p><code>${code}</code></p>` : ''}`)

/** The device flow's "enter the code" page; `form` is the provider's own form (with its xsrf field). */
export function userCodeInputPage(form: string, problem: string | undefined): string {
  return page(
    'Connect a device',
    html`${problem ? html`<p class="error" role="alert">${problem}</p>` : html`<p>Enter the code shown on your device.</p>`}
${raw(form)}
<button type="submit" form="op.deviceInputForm">Continue</button>`,
  )
}

export function userCodeConfirmPage(form: string, clientName: string, userCode: string): string {
  return page(
    'Confirm the device',
    html`<p><strong>${clientName}</strong> shows this code:</p><p><code>${userCode}</code></p>
<p>Continue only if the device in front of you shows the same code.</p>
${raw(form)}
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Abort</button>`,
  )
}

export const deviceSuccessPage = (clientName: string): string =>
  page('Device connected', html`<p>${clientName} is signed in. You can close this page.</p>`)

export function logoutPage(form: string, host: string): string {
  return page(
    'Sign out',
    html`<p>Sign out of ${host}?</p>
${raw(form)}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button>`,
  )
}

export const signedOutPage = (): string => page('Signed out', html`<p>You are signed out.</p>`)
