// Audit (admins): what operators and admins did, every service's trail merged at the gateway's /api/v1/admin/audit,
// newest first — who (a user, an API key, an OAuth client, a carrier), what, on what, when, from where and under
// which request — filtered to one action or one actor, a page at a time ("Older entries" follows the page's `next`).
// A service whose trail could not be read is named above the table. Nothing here changes an entry: no route can.
import type { AuditEntry, MergedAuditPage } from '@meridian/contracts'
import { api } from '../api.ts'
import { busy, dataTable, errorBox, h, loading, panel, show, submitWith, timeOf } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

const auditPath = '/api/v1/admin/audit'
const pageSize = 50

/** The query of the first page: the filters the admin typed (empty ones left out). */
export function auditQuery(filter: { action: string; actor: string }): string {
  const query = new URLSearchParams({ limit: String(pageSize) })
  if (filter.action.trim()) query.set('action', filter.action.trim())
  if (filter.actor.trim()) query.set('actor', filter.actor.trim())
  return query.toString()
}

export function auditView({ session }: ViewContext): View {
  const action = h('input', {
    id: 'audit-action',
    name: 'action',
    maxlength: 100,
    placeholder: 'api_key.created',
  })
  const actor = h('input', { id: 'audit-actor', name: 'actor', maxlength: 300, placeholder: 'user:…' })
  const apply = h('button', { type: 'submit' }, 'Show')
  const older = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older entries')
  const errors = h('div', { 'aria-live': 'assertive' })
  const unavailable = h('p', { role: 'status', class: 'outcome-note' })
  const list = h('div', { 'aria-busy': 'true' }, loading('the audit trail'))
  let shown: AuditEntry[] = []
  let next: string | null = null
  /** the latest read: an answer to an earlier one (other filters) is dropped */
  let latestRead = 0

  async function read(query: string, append: boolean): Promise<void> {
    const reading = ++latestRead
    list.setAttribute('aria-busy', 'true')
    try {
      const page = await api<MergedAuditPage>('GET', `${auditPath}?${query}`, { token: session.token })
      if (reading !== latestRead) return
      shown = append ? [...shown, ...page.data] : page.data
      next = page.next
      older.hidden = next === null
      show(
        unavailable,
        page.unavailable.length > 0
          ? `Not shown: the trail of ${page.unavailable.join(', ')} could not be read just now.`
          : null,
      )
      show(list, table())
      // what the list shows, for whoever waits for it (a test, an assistive tool): the filter of its answer
      const filter = new URLSearchParams(query)
      list.setAttribute('data-action', filter.get('action') ?? '')
      list.setAttribute('data-actor', filter.get('actor') ?? '')
    } catch (error) {
      if (reading === latestRead) show(list, errorBox(error))
    } finally {
      if (reading === latestRead) list.setAttribute('aria-busy', 'false')
    }
  }

  const first = () => read(auditQuery({ action: action.value, actor: actor.value }), false)

  function table(): HTMLElement {
    if (shown.length === 0) return h('p', {}, 'No entry matches.')
    return dataTable(
      'audit',
      `The newest ${shown.length} entries, newest first`,
      ['When', 'Service', 'Who', 'What', 'On what', 'From', 'Request'],
      shown.map(entryRow),
    )
  }

  function entryRow(entry: AuditEntry): HTMLTableRowElement {
    const detail = Object.keys(entry.detail).length > 0 ? JSON.stringify(entry.detail, null, 2) : undefined
    return h(
      'tr',
      { 'data-service': entry.service, 'data-action': entry.action, 'data-target': entry.target },
      h('td', {}, timeOf(entry.at)),
      h('td', {}, entry.service),
      h('td', {}, h('code', {}, entry.actor)),
      h(
        'th',
        { scope: 'row' },
        h('code', {}, entry.action),
        detail ? h('details', {}, h('summary', {}, 'Detail'), h('pre', {}, detail)) : null,
      ),
      h('td', {}, h('code', {}, entry.target)),
      h('td', {}, entry.address ?? '—'),
      h('td', {}, entry.requestId ? h('code', {}, entry.requestId) : '—'),
    )
  }

  const form = h(
    'form',
    { class: 'inline', 'aria-label': 'Filter the audit trail' },
    h('label', { for: 'audit-action' }, 'Action'),
    action,
    h('label', { for: 'audit-actor' }, 'Actor'),
    actor,
    apply,
  )
  form.addEventListener('submit', submitWith(apply, errors, first))
  older.addEventListener('click', () => void busy(older, errors, () => read(next ?? '', true)))
  void first()

  return {
    element: panel(
      'audit',
      'Audit',
      h(
        'p',
        {},
        'What operators and admins did in every service: appended with the change it records, never changed.',
      ),
      form,
      errors,
      unavailable,
      list,
      older,
    ),
  }
}
