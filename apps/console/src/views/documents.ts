// Documents: the user's collaborative documents (GET/POST /api/v1/documents), adding a member, and editing one with
// others live on the realtime channel's /collab namespace. Each change typed is sent as a delete and/or an insert on
// the version it was made on, one at a time; others' edits arrive as collab:remote-edit; a conflict (someone else's
// edit came first) is announced and the server's text and version are adopted.
import type {
  CollabConflict,
  CollaborativeDocument,
  CollabRemoteEdit,
  CollabUser,
  DocumentSummary,
  Member,
} from '@meridian/contracts'
import { RealtimeRequestError, request } from '@meridian/realtime-client'
import { api } from '../api.ts'
import { applyOperation, caretAfter, operationsBetween } from '../collab-diff.ts'
import { busy, errorBox, h, loading, panel, show, submitWith } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

interface Page<Item> {
  data: Item[]
}

export function documentsView(context: ViewContext): View {
  const { session } = context
  const list = h('div', {}, loading('your documents'))
  const errors = h('div', { 'aria-live': 'assertive' })
  const editorPlace = h('div', {})
  let editor: View | undefined

  async function readDocuments(): Promise<void> {
    try {
      const page = await api<Page<DocumentSummary>>('GET', '/api/v1/documents?limit=50&sort=updatedAt:desc', {
        token: session.token,
      })
      show(list, documentsList(page.data))
    } catch (error) {
      show(list, errorBox(error))
    }
  }

  function open(document: DocumentSummary): void {
    editor?.close?.()
    editor = documentEditor(context, document)
    show(editorPlace, editor.element)
    editor.element.querySelector('h2')?.focus()
  }

  function documentsList(documents: DocumentSummary[]): HTMLElement {
    if (documents.length === 0) return h('p', {}, 'No documents yet.')
    return h(
      'ul',
      { class: 'documents' },
      ...documents.map((document) =>
        h(
          'li',
          { 'data-document-id': document.id },
          h('strong', {}, document.title),
          h('small', {}, ` version ${document.version} · ${document.members.length} member(s)`),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              'aria-label': `Open ${document.title}`,
              onclick: () => open(document),
            },
            'Open',
          ),
        ),
      ),
    )
  }

  const title = h('input', { id: 'document-title', name: 'title', required: true, maxlength: 200 })
  const create = h('button', { type: 'submit' }, 'Create document')
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh the list')
  refresh.addEventListener('click', () => void busy(refresh, errors, readDocuments))
  const createForm = h(
    'form',
    {
      'aria-label': 'Create a document',
      onsubmit: submitWith(create, errors, async () => {
        const created = await api<CollaborativeDocument>('POST', '/api/v1/documents', {
          token: session.token,
          body: { title: title.value },
        })
        title.value = ''
        await readDocuments()
        open(created)
      }),
    },
    h('label', { for: 'document-title' }, 'Document title'),
    title,
    create,
  )

  void readDocuments()
  return {
    element: panel(
      'documents',
      'Documents',
      h('p', {}, 'Your user id (to be added to a document): ', h('code', {}, session.user.id)),
      createForm,
      errors,
      h('h2', {}, 'Your documents'),
      list,
      refresh,
      editorPlace,
    ),
    refresh: () => void readDocuments(),
    close: () => editor?.close?.(),
  }
}

/** One open document: its text kept in step with the server's over /collab, who is in it, and adding a member. */
function documentEditor({ session, realtime }: ViewContext, document: DocumentSummary): View {
  const socket = realtime.namespace('/collab')
  const docId = document.id
  const text = h('textarea', { id: 'document-content', rows: 12, disabled: true, spellcheck: 'false' })
  const version = h('p', { class: 'document-version', id: 'document-version' }, 'Opening…')
  const users = h('ul', { class: 'document-users', 'aria-label': 'In this document' })
  // a live region present from the start, so what is written into it later is announced
  const notice = h('p', { class: 'conflict', role: 'status' })
  const errors = h('div', { 'aria-live': 'assertive' })
  text.setAttribute('aria-describedby', 'document-version')

  /** the content at `current` as the server has it; the textarea may be ahead by the change being sent */
  let confirmed = ''
  let current = 0
  let joined = false
  let sending = false

  function setVersion(next: number): void {
    current = next
    version.textContent = `Version ${next}`
    version.dataset.version = String(next)
  }

  /** Shows the server's text; the caret stays where it was, as far as the text allows. */
  function adopt(content: string, at: number): void {
    const { selectionStart, selectionEnd } = text
    confirmed = content
    text.value = content
    text.setSelectionRange(Math.min(selectionStart, content.length), Math.min(selectionEnd, content.length))
    setVersion(at)
  }

  async function join(): Promise<void> {
    joined = false
    text.disabled = true
    try {
      const { state } = await request(socket, 'collab:join', { docId })
      adopt(state.content, state.version)
      joined = true
      text.disabled = false
      show(errors)
    } catch (error) {
      show(errors, errorBox(error))
    }
  }

  /** Sends what the textarea has that the server has not, one operation at a time, each on the latest version. */
  async function sendChanges(): Promise<void> {
    if (sending || !joined) return
    sending = true
    try {
      for (;;) {
        const [operation] = operationsBetween(confirmed, text.value)
        if (!operation) break
        const answer = await request(socket, 'collab:edit', { docId, operation, baseVersion: current })
        confirmed = applyOperation(confirmed, operation)
        setVersion(answer.version)
      }
    } catch (error) {
      // a conflict was answered with collab:conflict first, and adopted; anything else: start again from the server
      if (!(error instanceof RealtimeRequestError && error.code === 'CONFLICT')) {
        show(errors, errorBox(error))
        await join()
      }
    } finally {
      sending = false
    }
  }

  function remoteEdit(edit: CollabRemoteEdit): void {
    if (edit.docId !== docId) return
    // an edit missed (a lost connection): read the whole state again
    if (edit.newVersion !== current + 1) {
      void join()
      return
    }
    confirmed = applyOperation(confirmed, edit.operation)
    setVersion(edit.newVersion)
    // while a change of ours is on its way it was made on the previous version: its conflict brings the server's text
    if (sending) return
    const start = caretAfter(text.selectionStart, edit.operation)
    const end = caretAfter(text.selectionEnd, edit.operation)
    text.value = confirmed
    text.setSelectionRange(start, end)
  }

  function conflict(answer: CollabConflict): void {
    if (answer.docId !== docId) return
    adopt(answer.serverContent, answer.serverVersion)
    const at = new Date().toLocaleTimeString()
    notice.textContent = `Conflict at ${at}: someone else changed the document at the same time, so your last change was not applied. It now shows version ${answer.serverVersion}.`
  }

  function usersIn(list: CollabUser[]): void {
    show(users, ...list.map((user) => h('li', { 'data-user-id': user.id }, user.username || user.id)))
  }

  const rejoin = (namespace: string) => {
    if (namespace === '/collab') void join()
  }

  text.addEventListener('input', () => void sendChanges())
  socket.on('collab:remote-edit', remoteEdit)
  socket.on('collab:conflict', conflict)
  socket.on('collab:users', usersIn)
  const stopResync = realtime.on('resync', rejoin)
  void join()

  const member = h('input', { id: 'document-member', name: 'userId', required: true, spellcheck: 'false' })
  const add = h('button', { type: 'submit' }, 'Add member')
  const added = h('p', { role: 'status' })
  const memberForm = h(
    'form',
    {
      'aria-label': 'Add a member',
      onsubmit: submitWith(add, errors, async () => {
        added.textContent = ''
        const userId = member.value.trim()
        await api<Member>('POST', `/api/v1/documents/${docId}/members`, {
          token: session.token,
          body: { userId },
        })
        member.value = ''
        added.textContent = `${userId} is a member now.`
      }),
    },
    h('label', { for: 'document-member' }, 'Add a member by user id'),
    member,
    add,
    added,
  )

  return {
    element: h(
      'section',
      { class: 'document', 'aria-labelledby': 'document-heading', 'data-document-id': docId },
      h('h2', { id: 'document-heading', tabindex: -1 }, document.title),
      version,
      h('label', { for: 'document-content' }, `Content of ${document.title}`),
      text,
      notice,
      errors,
      h('h3', {}, 'In this document'),
      users,
      memberForm,
    ),
    close() {
      socket.off('collab:remote-edit', remoteEdit)
      socket.off('collab:conflict', conflict)
      socket.off('collab:users', usersIn)
      stopResync()
      if (joined) socket.emit('collab:leave', { docId })
    },
  }
}
