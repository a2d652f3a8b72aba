// The signed-in user's account: who they are (GET /api/v1/users/{id}, whether their address is verified included, and
// while it is not, a new link to it on demand: POST /api/v1/email-verifications), a
// change of their address (POST /api/v1/users/{id}/email-change with their password: a link goes to the new address,
// whose page, #/verify-email/<token>, sets it; verify-email.ts) and their notification preferences, each type by each
// channel (GET and PUT /api/v1/users/{id}/notification-preferences: the PUT replaces the whole set, and the page shows
// what it answers). Security mails (a password reset, an address to verify, a password changed) are no notification
// type: always sent.
import {
  type EmailChangeAccepted,
  type EmailVerificationRequested,
  type NotificationChannels,
  type NotificationPreferenceSet,
  type NotificationPreferences,
  type NotificationType,
  notificationTypes,
  type User,
} from '@meridian/contracts'
import { api } from '../api.ts'
import type { Session } from '../session.ts'
import { busy, dataTable, errorBox, h, loading, panel, show, submitWith } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

type Channel = keyof NotificationChannels

const typeLabels: Record<NotificationType, string> = {
  order_placed: 'Order placed',
  payment_failed: 'Payment failed',
  shipment_created: 'Order shipped',
  shipment_delivered: 'Order delivered',
  return_requested: 'Return requested',
  return_received: 'Return received',
  return_completed: 'Return completed',
  return_rejected: 'Return rejected',
  exchange_requested: 'Exchange requested',
  exchange_awaiting_goods: 'Exchange awaiting your items',
  exchange_completed: 'Exchange completed',
  exchange_failed: 'Exchange failed',
  welcome: 'Welcome',
}

const channels: { channel: Channel; label: string }[] = [
  { channel: 'inApp', label: 'In your list' },
  { channel: 'realtime', label: 'Live' },
  { channel: 'email', label: 'By e-mail' },
]

const preferencesPath = (session: Session) => `/api/v1/users/${session.user.id}/notification-preferences`

function checkboxOf(type: NotificationType, channel: Channel, label: string, on: boolean): HTMLInputElement {
  return h('input', {
    type: 'checkbox',
    name: `${type}.${channel}`,
    'data-type': type,
    'data-channel': channel,
    'aria-label': `${typeLabels[type]}: ${label}`,
    checked: on,
  })
}

function preferencesTable(set: NotificationPreferenceSet): HTMLTableElement {
  const rows = notificationTypes.map((type) =>
    h(
      'tr',
      { 'data-type': type },
      h('th', { scope: 'row' }, typeLabels[type]),
      ...channels.map(({ channel, label }) =>
        h('td', {}, checkboxOf(type, channel, label, set[type][channel])),
      ),
    ),
  )
  return dataTable(
    'preferences',
    'Which notifications reach you, and how',
    ['Notification', ...channels.map(({ label }) => label)],
    rows,
  )
}

/** What the table's boxes say, as the whole set a PUT replaces. */
function preferencesIn(table: Element): NotificationPreferenceSet {
  const set = {} as NotificationPreferenceSet
  for (const type of notificationTypes) {
    const box = (channel: Channel) =>
      table.querySelector<HTMLInputElement>(`input[data-type="${type}"][data-channel="${channel}"]`)
        ?.checked ?? true
    set[type] = { inApp: box('inApp'), realtime: box('realtime'), email: box('email') }
  }
  return set
}

/** While the address is not verified: a button mailing a new link to it (the older link stops working). */
function newLinkButton(session: Session): HTMLElement {
  const errors = h('div', { 'aria-live': 'assertive' })
  const sent = h('span', { role: 'status', 'aria-live': 'polite' })
  const send = async () => {
    await api<EmailVerificationRequested>('POST', '/api/v1/email-verifications', { token: session.token })
    show(sent, ' A new link was sent to your address; older links no longer work.')
  }
  const button: HTMLButtonElement = h(
    'button',
    {
      type: 'button',
      class: 'send-verification',
      onclick: () => {
        show(sent)
        void busy(button, errors, send)
      },
    },
    'Send a new link',
  )
  return h('span', { class: 'new-verification-link' }, ' ', button, sent, errors)
}

function accountDetails(user: User, session: Session): HTMLElement {
  return h(
    'dl',
    { class: 'account' },
    h('dt', {}, 'Name'),
    h('dd', {}, user.name),
    h('dt', {}, 'Email'),
    h('dd', {}, user.email),
    h('dt', {}, 'Address verified'),
    h(
      'dd',
      { 'data-email-verified': String(user.emailVerified) },
      ...(user.emailVerified ? ['Yes'] : ['Not yet: open the link mailed to it', newLinkButton(session)]),
    ),
    h('dt', {}, 'Role'),
    h('dd', {}, user.role),
  )
}

function inputOf(id: string, label: string, attributes: Record<string, string | number | boolean>) {
  const input = h('input', { id, name: id, required: true, ...attributes })
  return { input, nodes: [h('label', { for: id }, label), input] }
}

/** Your address changed with your password: the API mails a link to the new one, and nothing changes until it is used. */
function emailChangeSection(session: Session): HTMLElement {
  const errors = h('div', { 'aria-live': 'assertive' })
  const sent = h('div', { role: 'status', 'aria-live': 'polite' })
  const email = inputOf('new-email', 'New address', { type: 'email', autocomplete: 'email', maxlength: 254 })
  const password = inputOf('email-change-password', 'Your password', {
    type: 'password',
    autocomplete: 'current-password',
    maxlength: 1024,
  })
  const submit = h('button', { type: 'submit', class: 'change-email' }, 'Send a link to the new address')
  const onsubmit = submitWith(submit, errors, async () => {
    show(sent)
    const address = email.input.value
    await api<EmailChangeAccepted>('POST', `/api/v1/users/${session.user.id}/email-change`, {
      token: session.token,
      body: { email: address, password: password.input.value },
    })
    password.input.value = ''
    show(
      sent,
      h(
        'p',
        {},
        `A link was sent to ${address}. Your address changes to it when the link is opened; until then it stays ` +
          'as it is. Your current address was told of the change.',
      ),
    )
  })
  return h(
    'div',
    {},
    h('h2', { id: 'email-change-title' }, 'Change e-mail address'),
    h(
      'form',
      { class: 'email-change-form', 'aria-labelledby': 'email-change-title', onsubmit },
      ...email.nodes,
      ...password.nodes,
      submit,
    ),
    errors,
    sent,
  )
}

export function accountView({ session }: ViewContext): View {
  const who = h('div', {}, loading('your account'))
  const table = h('div', {}, loading('your notification preferences'))
  const errors = h('div', { 'aria-live': 'assertive' })
  const saved = h('p', { role: 'status', 'aria-live': 'polite' })
  // nothing to save until the preferences are read (an empty table would save every channel on)
  const submit = h(
    'button',
    { type: 'submit', class: 'save-preferences', disabled: true },
    'Save preferences',
  )
  const shown = (answer: NotificationPreferences) => {
    show(table, preferencesTable(answer.preferences))
    submit.disabled = false
  }

  const form = h(
    'form',
    {
      class: 'preferences-form',
      'aria-labelledby': 'preferences-title',
      onsubmit: submitWith(submit, errors, async () => {
        show(saved)
        const answer = await api<NotificationPreferences>('PUT', preferencesPath(session), {
          token: session.token,
          body: { preferences: preferencesIn(table) },
        })
        shown(answer)
        show(saved, 'Saved.')
      }),
    },
    table,
    submit,
  )

  api<User>('GET', `/api/v1/users/${session.user.id}`, { token: session.token })
    .then((user) => show(who, accountDetails(user, session)))
    .catch((error: unknown) => show(who, errorBox(error)))
  api<NotificationPreferences>('GET', preferencesPath(session), { token: session.token })
    .then(shown)
    .catch((error: unknown) => show(table, errorBox(error)))

  return {
    element: panel(
      'account',
      'Account',
      who,
      emailChangeSection(session),
      h('h2', { id: 'preferences-title' }, 'Notifications'),
      h(
        'p',
        { class: 'or' },
        'Security mails (a password reset, an address to verify, a password changed) are always sent.',
      ),
      form,
      errors,
      saved,
    ),
  }
}
