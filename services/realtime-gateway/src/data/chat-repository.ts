// Chat rooms, their members and their messages in PostgreSQL: SQL only, plain objects out; every function takes the
// pool or an open transaction.
import { defineList, type ListRequestOf, type ListResult, type Queryable } from '@meridian/db'
import { createMembershipsRepository } from './memberships.ts'

export interface ChatRoomRecord {
  id: string
  name: string
  ownerId: string
  /** member user ids, oldest membership first */
  members: string[]
  createdAt: Date
}

export interface ChatMessageRecord {
  id: string
  roomId: string
  userId: string
  username: string
  text: string
  createdAt: Date
}

const roomColumns = {
  id: 'id',
  name: 'name',
  ownerId: 'owner_id',
  members: 'members',
  createdAt: 'created_at',
  memberId: 'member_id',
} as const
const roomFields = ['id', 'name', 'ownerId', 'members', 'createdAt'] as const

/** GET /chat/rooms of an admin: every room, newest first. */
export const chatRoomList = defineList({
  table: 'chat_room_records',
  columns: roomColumns,
  selectable: roomFields,
  sortable: ['createdAt', 'name'],
  defaultSort: 'createdAt:desc',
  // no sparse fieldset: every field of the record, always
  alwaysSelected: roomFields,
})

/** GET /chat/rooms of a user: the rooms whose member they are (memberId, set by the use case, never the client). */
export const memberChatRoomList = defineList({
  table: 'chat_room_records_by_member',
  columns: roomColumns,
  selectable: roomFields,
  sortable: ['createdAt', 'name'],
  filterable: ['memberId'],
  defaultSort: 'createdAt:desc',
  alwaysSelected: roomFields,
})

const messageFields = ['id', 'roomId', 'userId', 'username', 'text', 'createdAt'] as const

/** GET /chat/rooms/{roomId}/messages: a room's messages, newest first. */
export const chatMessageList = defineList({
  table: 'chat_messages',
  columns: {
    id: 'id',
    roomId: 'room_id',
    userId: 'user_id',
    username: 'username',
    text: 'text',
    createdAt: 'created_at',
  },
  selectable: messageFields,
  sortable: ['createdAt'],
  filterable: ['roomId'],
  defaultSort: 'createdAt:desc',
  alwaysSelected: messageFields,
})

export type ChatRoomListRequest = ListRequestOf<typeof chatRoomList>
export type MemberChatRoomListRequest = ListRequestOf<typeof memberChatRoomList>
export type ChatMessageListRequest = ListRequestOf<typeof chatMessageList>

const roomSelection = ['id', 'name', 'owner_id', 'members', 'created_at']
const messageSelection = ['id', 'room_id', 'user_id', 'username', 'text', 'created_at']

export function createChatRepository(db: Queryable) {
  return {
    members: createMembershipsRepository(db, { table: 'chat_room_members', resourceColumn: 'room_id' }),

    /** The room, owned by `ownerId`, without members (the caller adds the owner in the same transaction). */
    async insertRoom(room: { name: string; ownerId: string }, sql: Queryable = db): Promise<{ id: string }> {
      const [row] = await sql<{ id: string }[]>`
        insert into chat_rooms ${sql({ name: room.name, owner_id: room.ownerId })} returning id`
      if (!row) throw new Error('insert into chat_rooms returned nothing')
      return row
    },

    async findRoom(id: string, sql: Queryable = db): Promise<ChatRoomRecord | undefined> {
      const [row] = await sql<ChatRoomRecord[]>`
        select ${sql(roomSelection)} from chat_room_records where id = ${id}`
      return row
    },

    /** List queries checked against their lists' allow-lists (422 VALIDATION_ERROR outside them), for the lists below. */
    listRequests: {
      rooms: (query: Parameters<typeof chatRoomList.parse>[0]) => chatRoomList.parse(query),
      memberRooms: (query: Parameters<typeof memberChatRoomList.parse>[0]) => memberChatRoomList.parse(query),
      messages: (query: Parameters<typeof chatMessageList.parse>[0]) => chatMessageList.parse(query),
    },

    async listRooms(request: ChatRoomListRequest, sql: Queryable = db): Promise<ListResult<ChatRoomRecord>> {
      return chatRoomList.run<ChatRoomRecord>(sql, request)
    },

    async listMemberRooms(
      request: MemberChatRoomListRequest,
      sql: Queryable = db,
    ): Promise<ListResult<ChatRoomRecord>> {
      return memberChatRoomList.run<ChatRoomRecord>(sql, request)
    },

    /**
     * Stores a message of a member of the room; undefined when `userId` is not (or no longer) a member, so a member
     * removed over REST while connected cannot post another word.
     */
    async insertMessageOfMember(
      message: { roomId: string; userId: string; username: string; text: string },
      sql: Queryable = db,
    ): Promise<ChatMessageRecord | undefined> {
      const [row] = await sql<ChatMessageRecord[]>`
        insert into chat_messages (room_id, user_id, username, text)
        select ${message.roomId}::uuid, ${message.userId}::uuid, ${message.username}::text, ${message.text}::text
        where exists (
          select 1 from chat_room_members where room_id = ${message.roomId} and user_id = ${message.userId}
        )
        returning ${sql(messageSelection)}`
      return row
    },

    /** The room's newest `count` messages, oldest first (chat:history). */
    async recentMessages(roomId: string, count: number, sql: Queryable = db): Promise<ChatMessageRecord[]> {
      const rows = await sql<ChatMessageRecord[]>`
        select ${sql(messageSelection)} from chat_messages where room_id = ${roomId}
        order by created_at desc, id desc limit ${count}`
      return rows.reverse()
    },

    async listMessages(
      request: ChatMessageListRequest,
      sql: Queryable = db,
    ): Promise<ListResult<ChatMessageRecord>> {
      return chatMessageList.run<ChatMessageRecord>(sql, request)
    },
  }
}

export type ChatRepository = ReturnType<typeof createChatRepository>
