// Chat: the user's rooms (GET/POST /api/v1/chat/rooms), adding a member, and talking in a room live on the realtime
// channel's /chat namespace: chat:join (members only) answers with the last 50 messages and who is here, then
// chat:message brings every new one (the sender's too), chat:typing who is writing, chat:user-joined/left presence.
import type { ChatMessage, ChatPresence, ChatRoom, ChatTyping, Member } from '@meridian/contracts'
import { request } from '@meridian/realtime-client'
import { api } from '../api.ts'
import { busy, errorBox, h, loading, panel, show, submitWith } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

interface Page<Item> {
  data: Item[]
}

/** How long a typing notice holds without another one (the sender says it stopped after `typingPauseMs`). */
const typingShownMs = 5000
const typingPauseMs = 2000

export function chatView(context: ViewContext): View {
  const { session } = context
  const list = h('div', {}, loading('your rooms'))
  const errors = h('div', { 'aria-live': 'assertive' })
  const roomPlace = h('div', {})
  let room: View | undefined

  async function readRooms(): Promise<void> {
    try {
      const page = await api<Page<ChatRoom>>('GET', '/api/v1/chat/rooms?limit=50&sort=name:asc', {
        token: session.token,
      })
      show(list, roomsList(page.data))
    } catch (error) {
      show(list, errorBox(error))
    }
  }

  function enter(chosen: ChatRoom): void {
    room?.close?.()
    room = chatRoom(context, chosen)
    show(roomPlace, room.element)
    room.element.querySelector('h2')?.focus()
  }

  function roomsList(rooms: ChatRoom[]): HTMLElement {
    if (rooms.length === 0) return h('p', {}, 'No rooms yet.')
    return h(
      'ul',
      { class: 'rooms' },
      ...rooms.map((each) =>
        h(
          'li',
          { 'data-room-id': each.id },
          h('strong', {}, each.name),
          h('small', {}, ` ${each.members.length} member(s)`),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              'aria-label': `Join ${each.name}`,
              onclick: () => enter(each),
            },
            'Join',
          ),
        ),
      ),
    )
  }

  const name = h('input', { id: 'room-name', name: 'name', required: true, maxlength: 100 })
  const create = h('button', { type: 'submit' }, 'Create room')
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh the list')
  refresh.addEventListener('click', () => void busy(refresh, errors, readRooms))
  const createForm = h(
    'form',
    {
      'aria-label': 'Create a room',
      onsubmit: submitWith(create, errors, async () => {
        const created = await api<ChatRoom>('POST', '/api/v1/chat/rooms', {
          token: session.token,
          body: { name: name.value },
        })
        name.value = ''
        await readRooms()
        enter(created)
      }),
    },
    h('label', { for: 'room-name' }, 'Room name'),
    name,
    create,
  )

  void readRooms()
  return {
    element: panel(
      'chat',
      'Chat',
      h('p', {}, 'Your user id (to be added to a room): ', h('code', {}, session.user.id)),
      createForm,
      errors,
      h('h2', {}, 'Your rooms'),
      list,
      refresh,
      roomPlace,
    ),
    refresh: () => void readRooms(),
    close: () => room?.close?.(),
  }
}

/** One joined room: its messages as they come, who is here and who is typing, sending, and adding a member. */
function chatRoom({ session, realtime }: ViewContext, chosen: ChatRoom): View {
  const socket = realtime.namespace('/chat')
  const roomId = chosen.id
  const messages = h('ol', { class: 'messages', role: 'log', 'aria-label': `Messages in ${chosen.name}` })
  const here = h('p', { class: 'here' })
  const typing = h('p', { class: 'typing', 'aria-live': 'polite' })
  const errors = h('div', { 'aria-live': 'assertive' })
  const shown = new Set<string>()
  const online = new Map<string, string>()
  const typers = new Map<string, { username: string; timer: ReturnType<typeof setTimeout> }>()
  let joined = false
  /** the join in flight (or the last one): a message sent before it answered waits for it */
  let joining: Promise<void> = Promise.resolve()
  let typingSince: ReturnType<typeof setTimeout> | undefined

  function add(message: ChatMessage): void {
    if (message.roomId !== roomId || shown.has(message.id)) return
    shown.add(message.id)
    const mine = message.userId.toLowerCase() === session.user.id.toLowerCase()
    messages.append(
      h(
        'li',
        { 'data-message-id': message.id, class: mine ? 'mine' : undefined },
        h('strong', {}, message.username),
        ' ',
        h('time', { datetime: message.createdAt }, new Date(message.createdAt).toLocaleTimeString()),
        h('p', {}, message.text),
      ),
    )
    messages.lastElementChild?.scrollIntoView({ block: 'nearest' })
  }

  function showHere(): void {
    here.textContent = online.size === 0 ? '' : `Here now: ${[...online.values()].join(', ')}`
  }

  function showTyping(): void {
    const names = [...typers.values()].map((typer) => typer.username)
    typing.textContent =
      names.length === 0 ? '' : `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} typing…`
  }

  async function join(): Promise<void> {
    joined = false
    try {
      const answer = await request(socket, 'chat:join', { roomId })
      for (const message of answer.history.messages) add(message)
      online.clear()
      for (const user of answer.online) online.set(user.userId, user.username)
      showHere()
      joined = true
      show(errors)
    } catch (error) {
      show(errors, errorBox(error))
    }
  }

  const arrived = (user: ChatPresence) => {
    if (user.roomId !== roomId) return
    online.set(user.userId, user.username)
    showHere()
  }
  const left = (user: ChatPresence) => {
    if (user.roomId !== roomId) return
    online.delete(user.userId)
    showHere()
  }
  const typingNotice = (notice: ChatTyping) => {
    if (notice.roomId !== roomId) return
    clearTimeout(typers.get(notice.userId)?.timer)
    typers.delete(notice.userId)
    if (notice.isTyping) {
      const timer = setTimeout(() => {
        typers.delete(notice.userId)
        showTyping()
      }, typingShownMs)
      typers.set(notice.userId, { username: notice.username, timer })
    }
    showTyping()
  }
  const rejoin = (namespace: string) => {
    if (namespace === '/chat') joining = join()
  }

  socket.on('chat:message', add)
  socket.on('chat:user-joined', arrived)
  socket.on('chat:user-left', left)
  socket.on('chat:typing', typingNotice)
  const stopResync = realtime.on('resync', rejoin)
  joining = join()

  /** Tells the room once that the user is typing, and that they stopped after a pause. */
  function typed(): void {
    if (!joined) return
    if (typingSince === undefined) socket.emit('chat:typing', { roomId, isTyping: true })
    clearTimeout(typingSince)
    typingSince = setTimeout(stoppedTyping, typingPauseMs)
  }
  function stoppedTyping(): void {
    if (typingSince === undefined) return
    clearTimeout(typingSince)
    typingSince = undefined
    socket.emit('chat:typing', { roomId, isTyping: false })
  }

  const text = h('input', {
    id: 'chat-text',
    name: 'text',
    required: true,
    maxlength: 5000,
    autocomplete: 'off',
    oninput: typed,
  })
  const send = h('button', { type: 'submit' }, 'Send')
  // a form: Enter in the input sends
  const sendForm = h(
    'form',
    {
      class: 'send',
      'aria-label': 'Send a message',
      onsubmit: submitWith(send, errors, async () => {
        stoppedTyping()
        // a message typed while the room was still being joined (a slow answer, a reconnect) goes once it is: the
        // channel takes messages only from a socket in the room
        await joining
        const answer = await request(socket, 'chat:message', { roomId, text: text.value })
        add(answer.message)
        text.value = ''
        text.focus()
      }),
    },
    h('label', { for: 'chat-text' }, 'Message'),
    text,
    send,
  )

  const member = h('input', { id: 'room-member', name: 'userId', required: true, spellcheck: 'false' })
  const addMember = h('button', { type: 'submit' }, 'Add member')
  const added = h('p', { role: 'status' })
  const memberForm = h(
    'form',
    {
      'aria-label': 'Add a member to the room',
      onsubmit: submitWith(addMember, errors, async () => {
        added.textContent = ''
        const userId = member.value.trim()
        await api<Member>('POST', `/api/v1/chat/rooms/${roomId}/members`, {
          token: session.token,
          body: { userId },
        })
        member.value = ''
        added.textContent = `${userId} is a member now.`
      }),
    },
    h('label', { for: 'room-member' }, 'Add a member by user id'),
    member,
    addMember,
    added,
  )

  return {
    element: h(
      'section',
      { class: 'chat-room', 'aria-labelledby': 'room-heading', 'data-room-id': roomId },
      h('h2', { id: 'room-heading', tabindex: -1 }, chosen.name),
      here,
      messages,
      typing,
      errors,
      sendForm,
      memberForm,
    ),
    close() {
      stoppedTyping()
      for (const typer of typers.values()) clearTimeout(typer.timer)
      socket.off('chat:message', add)
      socket.off('chat:user-joined', arrived)
      socket.off('chat:user-left', left)
      socket.off('chat:typing', typingNotice)
      stopResync()
      if (joined) socket.emit('chat:leave', { roomId })
    },
  }
}
