// The /collab namespace: opening a document (members only, at most REALTIME_MAX_ROOMS_PER_SOCKET per socket) with its
// state, who is editing it (collab:users, to everyone in it, across instances), and edits made on a version (an
// insert's text at most realtimeLimits.editTextMax characters): applied with a compare-and-set in PostgreSQL and sent
// to the others as collab:remote-edit, or answered with collab:conflict and the stored state to rebase on. A member
// removed over REST, or everyone when the document is deleted, leaves it (room-access.ts).
import {
  AppError,
  type CollabDocumentState,
  CollabEdit,
  CollabJoin,
  type CollabUser,
  realtimeScopes,
} from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import {
  type DocumentUseCases,
  documentChannel,
  documentChannelPrefix,
  type Editor,
} from '../domain/documents.ts'
import { type ChannelNamespace, type ChannelSocket, ClientEvents, RoomCap } from './channel.ts'
import type { RoomAccess } from './room-access.ts'

export interface CollabChannelDependencies {
  documents: DocumentUseCases
  /** REALTIME_MAX_ROOMS_PER_SOCKET */
  maxRooms: number
  /** where the sockets of a removed member, or of a deleted document, are made to leave */
  rooms: RoomAccess
  log: FastifyBaseLogger
}

/** The refusal of an edit to a document this socket did not open. */
export const notOpenedMessage = 'Join the document first'

const editorOf = (socket: ChannelSocket<'/collab'>): Editor => ({
  userId: socket.data.user.userId.toLowerCase(),
  username: socket.data.user.username,
})

export function collabChannel(
  namespace: ChannelNamespace<'/collab'>,
  { documents, maxRooms, rooms, log }: CollabChannelDependencies,
): void {
  const cap = new RoomCap(maxRooms, documentChannelPrefix)

  /** Tells everyone in the document who is in it: each user once, whatever their tabs and instances. */
  async function announceUsers(docId: string): Promise<void> {
    const room = documentChannel(docId)
    const sockets = await namespace.in(room).fetchSockets()
    const users = new Map<string, CollabUser>()
    for (const each of sockets) {
      const userId = each.data.user.userId.toLowerCase()
      if (!users.has(userId)) users.set(userId, { id: userId, username: each.data.user.username })
    }
    namespace.to(room).emit('collab:users', [...users.values()])
  }

  const announceLater = (docId: string) =>
    announceUsers(docId).catch((error: unknown) => log.warn({ err: error, docId }, 'collab:users not sent'))

  // a document this socket may no longer be in: it leaves, and the others are told who is left
  rooms.onRevoked('/collab', async (socket, room) => {
    await socket.leave(room)
    await announceLater(room.slice(documentChannelPrefix.length))
  })

  const events = new ClientEvents<ChannelSocket<'/collab'>>(log, realtimeScopes.namespaces['/collab'].events)
    .on('collab:join', CollabJoin, async (socket, { docId }) => {
      const state = await cap.join(socket, documentChannel(docId), async (): Promise<CollabDocumentState> => {
        const opened = await documents.openDocument(docId, editorOf(socket))
        await socket.join(documentChannel(docId))
        return opened
      })
      socket.emit('collab:init', state)
      // the join holds even if the list cannot be gathered (an instance slow to answer): logged, not refused
      await announceLater(docId)
      return { state }
    })
    .on('collab:leave', CollabJoin, async (socket, { docId }) => {
      const room = documentChannel(docId)
      // leaving a document this socket is not in changes nothing: acknowledged all the same
      if (!socket.rooms.has(room)) return {}
      await socket.leave(room)
      await announceLater(docId)
      return {}
    })
    .on('collab:edit', CollabEdit, async (socket, { docId, operation, baseVersion }) => {
      const room = documentChannel(docId)
      if (!socket.rooms.has(room)) throw AppError.forbidden(notOpenedMessage)
      const editor = editorOf(socket)
      const outcome = await documents.applyEdit(docId, editor, operation, baseVersion)
      if (outcome.outcome === 'conflict') {
        const { serverVersion, serverContent } = outcome
        socket.emit('collab:conflict', { docId, serverVersion, serverContent })
        throw AppError.conflict(`The document is at version ${serverVersion}, not ${baseVersion}`)
      }
      socket.to(room).emit('collab:remote-edit', {
        docId,
        userId: editor.userId,
        username: editor.username,
        operation,
        newVersion: outcome.version,
      })
      return { version: outcome.version }
    })

  // the socket has left its rooms by 'disconnect': the documents it was in are noted while it still is, then announced
  const openedAtExit = new WeakMap<object, string[]>()
  function noteOpened(this: ChannelSocket<'/collab'>): void {
    const opened = [...this.rooms]
      .filter((room) => room.startsWith(documentChannelPrefix))
      .map((room) => room.slice(documentChannelPrefix.length))
    if (opened.length > 0) openedAtExit.set(this, opened)
  }
  function announceLeft(this: ChannelSocket<'/collab'>): void {
    for (const docId of openedAtExit.get(this) ?? []) void announceLater(docId)
    openedAtExit.delete(this)
  }

  namespace.on('connection', (socket) => {
    events.attach(socket)
    socket.on('disconnecting', noteOpened)
    socket.on('disconnect', announceLeft)
  })
}
