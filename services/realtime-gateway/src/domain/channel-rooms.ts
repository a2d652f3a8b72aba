// Which of the channel's rooms a user may be in: a chat room's and a document's only while they are its member; the
// others (`room:{name}` of the default namespace, their own `user:` and `notifications:` rooms, a socket's own id)
// are the socket's own business. Asked when a socket is recovered after a short disconnection, before it is put back
// into the rooms it was in.
import { type ChatUseCases, chatRoomChannelPrefix } from './chat.ts'
import { type DocumentUseCases, documentChannelPrefix } from './documents.ts'

export type MayBeIn = (userId: string, room: string) => Promise<boolean>

export function channelRoomRule({
  chat,
  documents,
}: {
  chat: Pick<ChatUseCases, 'isRoomMember'>
  documents: Pick<DocumentUseCases, 'isDocumentMember'>
}): MayBeIn {
  return async (userId, room) => {
    if (room.startsWith(chatRoomChannelPrefix))
      return chat.isRoomMember(room.slice(chatRoomChannelPrefix.length), userId)
    if (room.startsWith(documentChannelPrefix))
      return documents.isDocumentMember(room.slice(documentChannelPrefix.length), userId)
    return true
  }
}
