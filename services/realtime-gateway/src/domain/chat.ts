// Chat use cases: rooms and their members (REST), and what the /chat channel does with them: joining a room (members
// only) with its history, and posting a message (stored, then broadcast by the channel).
import {
  AppError,
  type ChatHistory,
  type ChatMessage,
  type ChatMessageListQuery,
  type ChatRoom,
  type ChatRoomListQuery,
  type CreateChatRoomBody,
  realtimeLimits,
  realtimeMessages,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Sql, transaction } from '@meridian/db'
import type { Principal } from '@meridian/service-kit'
import type { ChatMessageRecord, ChatRepository, ChatRoomRecord } from '../data/chat-repository.ts'
import {
  type ChannelAccess,
  createMembershipUseCases,
  isAdmin,
  isUuid,
  memberIdOf,
  noChannel,
  ownerIdOf,
} from './memberships.ts'

export const chatRoomHref = (id: string) => `/api/v1/chat/rooms/${id}`

/** The channel's room of a chat room: every socket that joined it, on every instance. */
export const chatRoomChannel = (roomId: string) => `chatroom:${roomId}`
export const chatRoomChannelPrefix = 'chatroom:'

export function presentChatRoom(room: ChatRoomRecord): ChatRoom {
  return {
    id: room.id,
    name: room.name,
    ownerId: room.ownerId,
    members: room.members,
    createdAt: room.createdAt.toISOString(),
  }
}

export function presentChatMessage(message: ChatMessageRecord): ChatMessage {
  return {
    id: message.id,
    roomId: message.roomId,
    userId: message.userId,
    username: message.username,
    text: message.text,
    createdAt: message.createdAt.toISOString(),
  }
}

/** Who is speaking on the channel: the connected user as the handshake verified them. */
export interface ChatSpeaker {
  userId: string
  username: string
}

/** PostgreSQL text cannot hold NUL: such a message is refused as an invalid one, not a database error. */
function assertStorableText(text: string): void {
  if (text.includes('\u0000')) {
    throw AppError.validation(
      [{ field: 'text', message: 'must not contain NUL (U+0000) characters' }],
      realtimeMessages.invalidMessageFormat,
    )
  }
}

export interface ChatUseCasesDependencies {
  chat: ChatRepository
  sql: Sql
  /** the channel, told of removed members (their sockets leave the room); none by default */
  access?: ChannelAccess
}

export function createChatUseCases({ chat, sql, access = noChannel }: ChatUseCasesDependencies) {
  const memberships = createMembershipUseCases({
    label: 'Chat room',
    find: (id) => chat.findRoom(id),
    members: chat.members,
    access,
  })
  const isRoomMember = memberships.isMember

  return {
    /** A new room, owned by the caller, who is its first member (one transaction). */
    async createRoom(body: CreateChatRoomBody, principal: Principal): Promise<ChatRoom> {
      const ownerId = ownerIdOf(principal, 'chat rooms')
      const id = await transaction(sql, async (tx) => {
        const room = await chat.insertRoom({ name: body.name.trim(), ownerId }, tx)
        await chat.members.add(room.id, ownerId, tx)
        return room.id
      })
      const room = await chat.findRoom(id)
      if (!room) throw new Error(`chat room ${id} was created but cannot be read`)
      return presentChatRoom(room)
    },

    /** The room, for its members and admins; 404 for anyone else (its existence is not told). */
    async getRoom(roomId: string, principal: Principal): Promise<ChatRoom> {
      return presentChatRoom(await memberships.visible(roomId, principal))
    },

    /** A page of rooms: every room for an admin, the caller's own (those they are a member of) for anyone else. */
    async listRooms(
      query: ChatRoomListQuery,
      principal: Principal,
      path: string,
    ): Promise<ListEnvelope<ChatRoom>> {
      if (isAdmin(principal)) {
        const request = chat.listRequests.rooms(query)
        const { rows, total } = await chat.listRooms(request)
        return listEnvelope(path, query, request, rows.map(presentChatRoom), total)
      }
      const memberId = memberIdOf(principal)
      const request = chat.listRequests.memberRooms({ ...query, memberId: memberId ?? undefined })
      // a caller who is nobody's member (an OAuth client) sees an empty list
      const { rows, total } = memberId === null ? { rows: [], total: 0 } : await chat.listMemberRooms(request)
      return listEnvelope(path, query, request, rows.map(presentChatRoom), total)
    },

    addMember: memberships.addMember,

    removeMember: memberships.removeMember,

    /** Whether the user may be in the room's channel room (a socket recovered after a short disconnection). */
    isRoomMember,

    /** A page of the room's messages, newest first by default: its members and admins; 404 for anyone else. */
    async listMessages(
      roomId: string,
      query: ChatMessageListQuery,
      principal: Principal,
      path: string,
    ): Promise<ListEnvelope<ChatMessage>> {
      await memberships.visible(roomId, principal)
      const request = chat.listRequests.messages({ ...query, roomId })
      const { rows, total } = await chat.listMessages(request)
      return listEnvelope(path, query, request, rows.map(presentChatMessage), total)
    },

    /**
     * What a member gets on joining the room on the channel: its last 50 messages, oldest first. Anyone else (and a
     * room that does not exist) is refused with the spec's 'Not a member of this room'.
     */
    async joinRoom(speaker: ChatSpeaker, roomId: string): Promise<ChatHistory> {
      if (!(await isRoomMember(roomId, speaker.userId)))
        throw AppError.forbidden(realtimeMessages.notRoomMember)
      const messages = await chat.recentMessages(roomId, realtimeLimits.chatHistory)
      return { roomId, messages: messages.map(presentChatMessage) }
    },

    /** Stores the speaker's message in the room (members only: one removed over REST meanwhile is refused). */
    async postMessage(speaker: ChatSpeaker, roomId: string, text: string): Promise<ChatMessage> {
      assertStorableText(text)
      const stored = isUuid(speaker.userId)
        ? await chat.insertMessageOfMember({
            roomId,
            userId: speaker.userId.toLowerCase(),
            username: speaker.username,
            text,
          })
        : undefined
      if (!stored) throw AppError.forbidden(realtimeMessages.notRoomMember)
      return presentChatMessage(stored)
    },
  }
}

export type ChatUseCases = ReturnType<typeof createChatUseCases>
