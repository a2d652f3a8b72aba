// Dead letters (admins): the system's dead-letter topics through the gateway's /api/v1/admin/dead-letters — each with
// how many events it holds and how many no replay has taken yet — a topic's newest events with why and when each was
// parked, and the replay of its pending events to their original topics. After a replay the topics and the events
// are read again (a replayed event that fails once more comes back as a new dead letter).
import type {
  DeadLetterEvent,
  DeadLetterEvents,
  DeadLetterReplay,
  DeadLetterTopic,
  DeadLetterTopics,
} from '@meridian/contracts'
import { api } from '../api.ts'
import { busy, dataTable, errorBox, h, loading, markCurrent, panel, show, timeOf } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

const deadLettersPath = '/api/v1/admin/dead-letters'
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`

export function deadLettersView({ session }: ViewContext): View {
  const showEmpty = h('input', { type: 'checkbox', id: 'dlt-show-empty' })
  const reload = h('button', { type: 'button', class: 'secondary' }, 'Refresh')
  const list = h('div', {}, loading('the dead-letter topics'))
  const detail = h('div', { class: 'dead-letter-events' })
  const errors = h('div', { 'aria-live': 'assertive' })
  const outcome = h('p', { role: 'status', 'aria-live': 'polite', class: 'outcome-note' })
  let topics: DeadLetterTopic[] = []
  /** the topic whose events are shown; an answer for another one (clicked before) is dropped */
  let opened: string | undefined

  async function readTopics(): Promise<void> {
    try {
      topics = (await api<DeadLetterTopics>('GET', deadLettersPath, { token: session.token })).data
      show(list, table())
    } catch (error) {
      show(list, errorBox(error))
    }
  }

  async function open(topic: string): Promise<void> {
    opened = topic
    markCurrent(list, { 'data-topic': topic })
    show(detail, loading(`the events of ${topic}`))
    try {
      const answer = await api<DeadLetterEvents>('GET', `${deadLettersPath}/${topic}/events?limit=50`, {
        token: session.token,
      })
      if (opened === topic) show(detail, eventsOf(answer))
    } catch (error) {
      if (opened === topic) show(detail, errorBox(error))
    }
  }

  function replayButton(topic: DeadLetterTopic): HTMLButtonElement {
    const button = h(
      'button',
      {
        type: 'button',
        disabled: topic.pending === 0,
        'aria-label': `Replay the pending events of ${topic.topic}`,
      },
      topic.pending === 0 ? 'Nothing to replay' : `Replay ${plural(topic.pending, 'pending event')}`,
    )
    button.addEventListener(
      'click',
      () =>
        void busy(button, errors, async () => {
          show(outcome)
          const result = await api<DeadLetterReplay>('POST', `${deadLettersPath}/${topic.topic}/replay`, {
            token: session.token,
          })
          const targets = Object.keys(result.to).join(', ') || topic.originalTopic
          show(outcome, `Replayed ${plural(result.replayed, 'event')} of ${topic.topic} to ${targets}.`)
          await Promise.all([readTopics(), open(topic.topic)])
        }),
    )
    return button
  }

  function table(): HTMLElement {
    const shown = showEmpty.checked ? topics : topics.filter((topic) => topic.total > 0)
    if (shown.length === 0) {
      return h(
        'p',
        {},
        topics.length === 0
          ? 'There is no dead-letter topic.'
          : `No event is dead-lettered (${plural(topics.length, 'topic')}, all empty).`,
      )
    }
    return dataTable(
      'dead-letters',
      'Dead-letter topics, {topic}.dlt',
      ['Topic', 'Events', 'Pending', 'Replay'],
      shown.map((topic) =>
        h(
          'tr',
          { 'data-topic': topic.topic, 'aria-current': topic.topic === opened ? 'true' : undefined },
          h(
            'th',
            { scope: 'row' },
            h(
              'button',
              { type: 'button', class: 'link', onclick: () => void open(topic.topic) },
              h('code', {}, topic.topic),
            ),
          ),
          h('td', { 'data-count': 'total' }, topic.total),
          h(
            'td',
            { 'data-count': 'pending', class: topic.pending > 0 ? 'pending' : undefined },
            topic.pending,
          ),
          h('td', {}, replayButton(topic)),
        ),
      ),
    )
  }

  function eventsOf({ topic, data }: DeadLetterEvents): HTMLElement {
    return h(
      'section',
      { 'aria-labelledby': 'dlt-events-title', 'data-topic': topic.topic },
      h('h2', { id: 'dlt-events-title' }, h('code', {}, topic.topic)),
      h(
        'p',
        {},
        `${plural(topic.total, 'event')}, ${topic.pending} pending; replayed events go back to `,
        h('code', {}, topic.originalTopic),
        '.',
      ),
      data.length === 0
        ? h('p', {}, 'The topic holds no event.')
        : dataTable(
            'dead-letter-list',
            `The newest ${plural(data.length, 'event')}, newest first`,
            ['Parked', 'Event', 'Consumer group', 'Why', 'State'],
            data.map(eventRow),
          ),
    )
  }

  function eventRow(event: DeadLetterEvent): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-event-id': event.eventId ?? undefined, 'data-replayed': String(event.replayed) },
      h('td', {}, event.deadLetteredAt ? timeOf(event.deadLetteredAt) : '—'),
      h(
        'td',
        {},
        h('div', {}, event.eventType ?? 'not an event'),
        event.eventId ? h('small', {}, h('code', {}, event.eventId)) : null,
        h(
          'details',
          {},
          h('summary', {}, 'Message'),
          h(
            'p',
            {},
            'Key ',
            h('code', {}, event.key || '(none)'),
            ` · partition ${event.partition}, offset ${event.offset}`,
          ),
          h('pre', {}, event.value),
        ),
      ),
      h('td', {}, event.consumerGroup ?? '—'),
      h(
        'td',
        {},
        event.errorMessage ?? '—',
        event.retryCount
          ? h('small', {}, ` after ${event.retryCount} ${event.retryCount === 1 ? 'retry' : 'retries'}`)
          : null,
      ),
      h('td', { class: event.replayed ? 'replayed' : 'pending' }, event.replayed ? 'replayed' : 'pending'),
    )
  }

  showEmpty.addEventListener('change', () => show(list, table()))
  reload.addEventListener(
    'click',
    () => void busy(reload, errors, () => Promise.all([readTopics(), opened ? open(opened) : undefined])),
  )
  void readTopics()

  return {
    element: panel(
      'dead-letters',
      'Dead letters',
      h(
        'p',
        {},
        'Events a consumer gave up on (invalid, or failed every retry). Replay them once the cause is fixed: consumers that already processed one skip it.',
      ),
      h(
        'div',
        { class: 'inline' },
        h('label', { for: 'dlt-show-empty' }, showEmpty, ' Show empty topics'),
        reload,
      ),
      errors,
      outcome,
      list,
      detail,
    ),
    refresh: () => void Promise.all([readTopics(), opened ? open(opened) : undefined]),
  }
}
