// Processes (admins; #/sagas still opens it): every long-running process the services declare (the order saga is type `order`, a return type
// `return`) through /api/v1/admin/processes — filtered by type, by that type's states and to the escalated ones, most
// recently updated first — and one instance with its step log and the actions its links offer (ask the awaited step
// again, run the compensations). After an action the instance and the list are read again.
import type {
  PaginationMeta,
  ProcessInstance,
  ProcessLogEntry,
  ProcessType,
  ProcessTypes,
} from '@meridian/contracts'
import { api } from '../api.ts'
import {
  compensateLabel,
  filterInWords,
  filterKey,
  instancePath,
  type ProcessFilter,
  processesPath,
  processListQuery,
  spaced,
  stateKept,
  statesOf,
  typeTitle,
} from '../processes.ts'
import { busy, dataTable, errorBox, h, loading, markCurrent, panel, show, timeOf } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

interface Page<Item> {
  data: Item[]
  meta: PaginationMeta
}

/** The instance shown below the list. */
interface Opened {
  type: string
  id: string
}

/** What an instance's section and row carry to be found: its type and id, and an order saga's order id. */
const instanceAttributes = ({ type, id }: Opened) => ({
  'data-process-type': type,
  'data-process-id': id,
  'data-order-id': type === 'order' ? id : undefined,
})

export function processesView({ session }: ViewContext): View {
  const filters = filterControls()
  // aria-busy while a list is being read; data-state, data-type and data-escalated name the filter of the list shown
  const list = h('div', { 'aria-busy': 'true' }, loading('the processes'))
  const detail = h('div', { class: 'saga' })
  const listErrors = h('div', { 'aria-live': 'assertive' })
  const actionErrors = h('div', { 'aria-live': 'assertive' })
  /** the declared types (GET /admin/processes/types): the filters' options and the actions' labels */
  let types: ProcessType[] = []
  /** the instance shown below the list; an answer for another one (clicked before) is dropped */
  let opened: Opened | undefined
  /** the latest read of the list: an answer to an earlier one (another filter, or a slower refresh) is dropped */
  let latestRead = 0

  async function readTypes(): Promise<void> {
    try {
      types = (await api<ProcessTypes>('GET', `${processesPath}/types`, { token: session.token })).data
    } catch (error) {
      show(listErrors, errorBox(error))
      return
    }
    const chosen = filters.type.value
    show(
      filters.type,
      h('option', { value: '' }, 'All types'),
      ...types.map((each) => h('option', { value: each.type, title: each.description }, spaced(each.type))),
    )
    filters.type.value = types.some((each) => each.type === chosen) ? chosen : ''
    if (offerStates()) await readList()
  }

  /** Fills the state filter with the chosen type's states; true when the chosen state is no longer offered. */
  function offerStates(): boolean {
    const states = statesOf(types, filters.type.value)
    const chosen = filters.state.value
    show(
      filters.state,
      h('option', { value: '' }, 'All states'),
      ...states.map((name) => h('option', { value: name }, spaced(name))),
    )
    filters.state.value = stateKept(states, chosen)
    return filters.state.value !== chosen
  }

  const filter = (): ProcessFilter => ({
    type: filters.type.value,
    state: filters.state.value,
    escalatedOnly: filters.escalated.checked,
  })

  async function readList(): Promise<void> {
    const read = ++latestRead
    const wanted = filter()
    list.setAttribute('aria-busy', 'true')
    // a list of another filter is not left on show while this one loads: it would read as this filter's
    if (list.dataset.filter !== filterKey(wanted)) show(list, loading(`the ${filterInWords(wanted)}`))
    let shown: HTMLElement
    try {
      const page = await api<Page<ProcessInstance>>('GET', `${processesPath}?${processListQuery(wanted)}`, {
        token: session.token,
      })
      shown = page.data.length === 0 ? h('p', {}, `No ${filterInWords(wanted)}.`) : table(page)
    } catch (error) {
      shown = errorBox(error)
    }
    if (read !== latestRead) return
    show(list, shown)
    Object.assign(list.dataset, {
      filter: filterKey(wanted),
      type: wanted.type,
      state: wanted.state,
      escalated: String(wanted.escalatedOnly),
    })
    list.setAttribute('aria-busy', 'false')
  }

  async function open(instance: Opened): Promise<void> {
    opened = instance
    const isOpened = () => opened?.type === instance.type && opened.id === instance.id
    markCurrent(list, { 'data-process-type': instance.type, 'data-process-id': instance.id })
    show(actionErrors)
    show(detail, loading(`the ${spaced(instance.type)} process`))
    try {
      const read = await api<ProcessInstance>('GET', instancePath(instance.type, instance.id), {
        token: session.token,
      })
      if (isOpened()) show(detail, instanceDetail(read, actionsOf(read), actionErrors))
    } catch (error) {
      if (isOpened()) show(detail, errorBox(error))
    }
  }

  function table({ data, meta }: Page<ProcessInstance>): HTMLElement {
    return dataTable(
      'processes',
      `Processes, most recently updated first (${data.length} of ${meta.total})`,
      ['Type', 'Id', 'State', 'Step', 'Attempt', 'Compensation', 'Escalated', 'Updated'],
      data.map((instance) =>
        instanceRow(
          instance,
          opened?.type === instance.type && opened.id === instance.id,
          () => void open(instance),
        ),
      ),
    )
  }

  /** The buttons of the actions the instance's links offer: each runs, then the instance and the list are read again. */
  function actionsOf(instance: ProcessInstance): HTMLElement[] {
    const { retry, compensate } = instance._links
    const run = (button: HTMLButtonElement, work: () => Promise<unknown>) => {
      button.addEventListener(
        'click',
        () =>
          void busy(button, actionErrors, async () => {
            await work()
            await Promise.all([readList(), open(instance)])
          }),
      )
      return button
    }
    const actions: HTMLElement[] = []
    if (retry) {
      const label = `Retry ${instance.step ?? 'the awaited step'}`
      const button = h('button', { type: 'button' }, label)
      actions.push(run(button, () => api(retry.method, retry.href, { token: session.token })))
    }
    if (compensate) {
      const reason = h('input', {
        id: 'compensate-reason',
        type: 'text',
        maxlength: 300,
        placeholder: 'compensated by an operator',
      })
      const button = h('button', { type: 'button' }, compensateLabel(types, instance.type))
      const body = () => (reason.value.trim() ? { reason: reason.value.trim() } : {})
      // the reason goes with its button: on a narrow window they wrap together
      actions.push(
        h(
          'span',
          { class: 'inline saga-actions' },
          h('label', { for: 'compensate-reason' }, 'Reason (optional)'),
          reason,
          run(button, () => api(compensate.method, compensate.href, { token: session.token, body: body() })),
        ),
      )
    }
    return actions
  }

  filters.type.addEventListener('change', () => {
    offerStates()
    void readList()
  })
  filters.state.addEventListener('change', () => void readList())
  filters.escalated.addEventListener('change', () => void readList())
  filters.reload.addEventListener('click', () => void busy(filters.reload, listErrors, readList))
  void readTypes()
  void readList()

  return {
    element: panel('processes', 'Processes', filters.element, listErrors, list, detail),
    refresh: () => void Promise.all([readList(), opened ? open(opened) : undefined]),
  }
}

/** The filter bar: the type, the state (its options follow the type), escalated only, and Refresh. */
function filterControls() {
  const type = h('select', { id: 'process-type', name: 'type' }, h('option', { value: '' }, 'All types'))
  const state = h('select', { id: 'saga-state', name: 'state' }, h('option', { value: '' }, 'All states'))
  const escalated = h('input', { id: 'process-escalated', name: 'escalated', type: 'checkbox' })
  const reload = h('button', { type: 'button', class: 'secondary' }, 'Refresh')
  const element = h(
    'div',
    { class: 'inline saga-filter' },
    h('label', { for: 'process-type' }, 'Type'),
    type,
    h('label', { for: 'saga-state' }, 'State'),
    state,
    h('span', { class: 'inline' }, escalated, h('label', { for: 'process-escalated' }, 'Escalated only')),
    reload,
  )
  return { element, type, state, escalated, reload }
}

/** One instance in the list: its id opens it below. */
function instanceRow(instance: ProcessInstance, current: boolean, onOpen: () => void): HTMLTableRowElement {
  return h(
    'tr',
    {
      ...instanceAttributes(instance),
      'data-escalated': String(instance.escalated),
      'aria-current': current ? 'true' : undefined,
    },
    h('td', {}, spaced(instance.type)),
    h('td', {}, h('button', { type: 'button', class: 'link', onclick: onOpen }, h('code', {}, instance.id))),
    h(
      'td',
      { class: `status status-${instance.state}`, 'data-state': instance.state },
      spaced(instance.state),
    ),
    h('td', {}, instance.step ?? instance.failedStep ?? '—'),
    h('td', {}, instance.step === null ? '—' : instance.attempt),
    h('td', {}, spaced(instance.compensation)),
    h('td', { class: instance.escalated ? 'escalated' : undefined }, instance.escalated ? 'yes' : 'no'),
    h('td', {}, timeOf(instance.updatedAt)),
  )
}

/** One instance: its facts, its own fields, the actions offered, and its step log. */
function instanceDetail(instance: ProcessInstance, actions: HTMLElement[], errors: HTMLElement): HTMLElement {
  const fact = (term: string, value: string | Node) => [h('dt', {}, term), h('dd', {}, value)]
  const awaited = instance.step
    ? `${instance.step} (attempt ${instance.attempt}${deadlineOf(instance)})`
    : 'none'
  return h(
    'section',
    { 'aria-labelledby': 'saga-title', ...instanceAttributes(instance) },
    h('h2', { id: 'saga-title' }, `${typeTitle(instance.type)} `, h('code', {}, instance.id)),
    h(
      'dl',
      { class: 'facts' },
      ...fact('Type', spaced(instance.type)),
      ...fact('State', h('span', { class: `status status-${instance.state}` }, spaced(instance.state))),
      ...fact('Awaited step', awaited),
      ...fact('Compensation', spaced(instance.compensation)),
      ...fact(
        'Escalated',
        instance.escalated ? `yes: ${instance.escalation ?? 'an operator must act'}` : 'no',
      ),
      ...(instance.failedStep ? fact('Failed step', instance.failedStep) : []),
      ...(instance.failureReason ? fact('Reason', instance.failureReason) : []),
      ...Object.entries(instance.data).flatMap(([name, value]) =>
        fact(name, h('code', {}, value === null ? 'null' : String(value))),
      ),
      ...fact('Started', timeOf(instance.createdAt)),
      ...fact('Updated', timeOf(instance.updatedAt)),
    ),
    actions.length > 0
      ? h('div', { class: 'inline saga-actions' }, ...actions)
      : h('p', {}, 'No action is offered in this state.'),
    errors,
    stepLog(instance.log ?? []),
  )
}

function deadlineOf(instance: ProcessInstance): string {
  return instance.deadline ? `, times out ${new Date(instance.deadline).toLocaleTimeString()}` : ''
}

function stepLog(log: ProcessLogEntry[]): HTMLElement {
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
