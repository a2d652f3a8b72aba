// Sagas (admins): the order saga's instances through the order service's /api/v1/admin/sagas — filtered by state,
// most recently updated first — and one of them with its step log and the actions its links offer (retry the
// awaited step, run the compensations). After an action the saga and the list are read again.
import { type PaginationMeta, type Saga, type SagaLogEntry, sagaStates } from '@meridian/contracts'
import { api } from '../api.ts'
import { busy, dataTable, errorBox, h, loading, markCurrent, panel, show, timeOf } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

interface Page<Item> {
  data: Item[]
  meta: PaginationMeta
}

const sagasPath = '/api/v1/admin/sagas'
const spaced = (name: string) => name.replaceAll('_', ' ')

export function sagasView({ session }: ViewContext): View {
  const state = h(
    'select',
    { id: 'saga-state', name: 'state' },
    h('option', { value: '' }, 'All states'),
    ...sagaStates.map((name) => h('option', { value: name }, spaced(name))),
  )
  const reload = h('button', { type: 'button', class: 'secondary' }, 'Refresh')
  // aria-busy while a list is being read; data-state names the filter of the list shown (empty: every state)
  const list = h('div', { 'aria-busy': 'true' }, loading('the sagas'))
  const detail = h('div', { class: 'saga' })
  const errors = h('div', { 'aria-live': 'assertive' })
  /** the saga shown below the list; an answer for another one (clicked before) is dropped */
  let opened: string | undefined

  /** the latest read of the list: an answer to an earlier one (another filter, or a slower refresh) is dropped */
  let latestRead = 0

  async function readList(): Promise<void> {
    const read = ++latestRead
    const wanted = state.value
    const query = new URLSearchParams({ limit: '50', sort: 'updatedAt:desc' })
    if (wanted) query.set('state', wanted)
    list.setAttribute('aria-busy', 'true')
    // a list of another filter is not left on show while this one loads: it would read as this filter's
    if (list.dataset.state !== wanted)
      show(list, loading(wanted ? `the ${spaced(wanted)} sagas` : 'the sagas'))
    let shown: HTMLElement
    try {
      shown = table(await api<Page<Saga>>('GET', `${sagasPath}?${query}`, { token: session.token }))
    } catch (error) {
      shown = errorBox(error)
    }
    if (read !== latestRead) return
    show(list, shown)
    list.dataset.state = wanted
    list.setAttribute('aria-busy', 'false')
  }

  async function open(orderId: string): Promise<void> {
    opened = orderId
    markCurrent(list, 'data-order-id', orderId)
    show(errors)
    show(detail, loading('the saga'))
    try {
      const saga = await api<Saga>('GET', `${sagasPath}/${orderId}`, { token: session.token })
      if (opened === orderId) show(detail, sagaDetail(saga))
    } catch (error) {
      if (opened === orderId) show(detail, errorBox(error))
    }
  }

  function table({ data, meta }: Page<Saga>): HTMLElement {
    if (data.length === 0) return h('p', {}, 'No saga in this state.')
    return dataTable(
      'sagas',
      `Sagas, most recently updated first (${data.length} of ${meta.total})`,
      ['Order', 'State', 'Step', 'Updated'],
      data.map((saga) =>
        h(
          'tr',
          { 'data-order-id': saga.orderId, 'aria-current': saga.orderId === opened ? 'true' : undefined },
          h(
            'td',
            {},
            h(
              'button',
              { type: 'button', class: 'link', onclick: () => void open(saga.orderId) },
              h('code', {}, saga.orderId),
            ),
          ),
          h('td', { class: `status status-${saga.state}`, 'data-state': saga.state }, spaced(saga.state)),
          h('td', {}, saga.step ?? saga.failedStep ?? '—'),
          h('td', {}, timeOf(saga.updatedAt)),
        ),
      ),
    )
  }

  /** A button for one of the saga's actions: it runs, then the saga and the list are read again. */
  function action(label: string, work: () => Promise<unknown>, orderId: string): HTMLButtonElement {
    const button = h('button', { type: 'button' }, label)
    button.addEventListener(
      'click',
      () =>
        void busy(button, errors, async () => {
          await work()
          await Promise.all([readList(), open(orderId)])
        }),
    )
    return button
  }

  function sagaDetail(saga: Saga): HTMLElement {
    const path = `${sagasPath}/${saga.orderId}`
    const fact = (term: string, value: string | Node) => [h('dt', {}, term), h('dd', {}, value)]
    const actions = [
      saga._links.retry
        ? action(
            `Retry ${saga.step ?? 'the awaited step'}`,
            () => api('POST', `${path}/retry`, { token: session.token }),
            saga.orderId,
          )
        : null,
      saga._links.compensate
        ? action(
            'Compensate (release the stock, refund)',
            () => api('POST', `${path}/compensate`, { token: session.token, body: {} }),
            saga.orderId,
          )
        : null,
    ].filter((button) => button !== null)
    return h(
      'section',
      { 'aria-labelledby': 'saga-title', 'data-order-id': saga.orderId },
      h('h2', { id: 'saga-title' }, 'Order ', h('code', {}, saga.orderId)),
      h(
        'dl',
        { class: 'facts' },
        ...fact('State', h('span', { class: `status status-${saga.state}` }, spaced(saga.state))),
        ...fact('Order status', spaced(saga.orderStatus)),
        ...fact(
          'Awaited step',
          saga.step ? `${saga.step} (attempt ${saga.attempt}${deadline(saga)})` : 'none',
        ),
        ...fact('Compensation', saga.compensation),
        ...(saga.failedStep ? fact('Failed step', saga.failedStep) : []),
        ...(saga.failureReason ? fact('Reason', saga.failureReason) : []),
        ...fact('Updated', timeOf(saga.updatedAt)),
      ),
      actions.length > 0
        ? h('div', { class: 'inline' }, ...actions)
        : h('p', {}, 'No action is offered in this state.'),
      errors,
      stepLog(saga.log ?? []),
    )
  }

  function deadline(saga: Saga): string {
    return saga.deadline ? `, times out ${new Date(saga.deadline).toLocaleTimeString()}` : ''
  }

  function stepLog(log: SagaLogEntry[]): HTMLElement {
    if (log.length === 0) return h('p', {}, 'The step log is empty.')
    return dataTable(
      'step-log',
      'Step log, oldest first',
      ['When', 'Step', 'Outcome', 'Attempt', 'Detail'],
      log.map((entry) =>
        h(
          'tr',
          { 'data-step': entry.step, 'data-outcome': entry.outcome },
          h('td', {}, timeOf(entry.at)),
          h('td', {}, entry.step),
          h('td', { class: `outcome outcome-${entry.outcome}` }, spaced(entry.outcome)),
          h('td', {}, entry.attempt ?? ''),
          h('td', {}, entry.detail ?? entry.eventType ?? ''),
        ),
      ),
    )
  }

  state.addEventListener('change', () => void readList())
  reload.addEventListener('click', () => void busy(reload, errors, readList))
  void readList()

  return {
    element: panel(
      'sagas',
      'Sagas',
      h('div', { class: 'inline saga-filter' }, h('label', { for: 'saga-state' }, 'State'), state, reload),
      list,
      detail,
    ),
    refresh: () => void Promise.all([readList(), opened ? open(opened) : undefined]),
  }
}
