// The realtime gateway's REST resources: chat rooms (with their members and message history) and collaborative
// documents (with their members). Who may join a room's or a document's channel room (/chat, /collab) is who is a
// member here.
import { type Static, Type } from 'typebox'
import { pageParameters, QueryObject, sortParameter } from './pagination.ts'
import { VisibleText } from './schema-kinds.ts'

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })

/** The largest document content, in characters: a document (and its collab:init) stays under the 1 MB message limit. */
export const documentContentMaxLength = 1_000_000

const sortQuery = (fields: readonly string[], example: string) =>
  sortParameter(fields, {
    description: `field:asc or field:desc, comma-separated, e.g. ${example}; fields: ${fields.join(', ')}`,
  })

// members, shared by rooms and documents

/** A user's membership of a room or a document. */
export const Member = Type.Object({ userId: Uuid, joinedAt: Timestamp }, { additionalProperties: false })
export type Member = Static<typeof Member>

export const AddMemberBody = Type.Object(
  { userId: Type.String({ format: 'uuid', maxLength: 36, description: 'the user (auth user id) to add' }) },
  { additionalProperties: false },
)
export type AddMemberBody = Static<typeof AddMemberBody>

// chat rooms

export const ChatRoom = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    ownerId: Type.String({
      format: 'uuid',
      maxLength: 36,
      description: 'who created it; a member that cannot be removed',
    }),
    members: Type.Array(Uuid, {
      description: 'user ids of the members (who may join it on /chat), oldest first',
    }),
    createdAt: Timestamp,
  },
  { additionalProperties: false },
)
export type ChatRoom = Static<typeof ChatRoom>

export const CreateChatRoomBody = Type.Object(
  { name: VisibleText({ minLength: 1, maxLength: 100, description: 'stored trimmed' }) },
  { additionalProperties: false },
)
export type CreateChatRoomBody = Static<typeof CreateChatRoomBody>

export const chatRoomSortFields = ['createdAt', 'name'] as const

/** GET /chat/rooms: page, limit, sort (newest first by default). A user sees the rooms they belong to; an admin all. */
export const ChatRoomListQuery = QueryObject(
  { ...pageParameters, sort: sortQuery(chatRoomSortFields, 'name:asc') },
  { additionalProperties: false },
)
export type ChatRoomListQuery = Static<typeof ChatRoomListQuery>

export const ChatRoomIdParams = Type.Object({ roomId: Uuid })
export type ChatRoomIdParams = Static<typeof ChatRoomIdParams>

export const ChatRoomMemberParams = Type.Object({ roomId: Uuid, userId: Uuid })
export type ChatRoomMemberParams = Static<typeof ChatRoomMemberParams>

/** Messages of a room: the newest 50 first by default (chat:history's size), paged. */
export const chatMessagePageSize = { default: 50, maximum: 100 } as const

export const ChatMessageListQuery = QueryObject(
  {
    ...pageParameters,
    limit: Type.Integer({
      minimum: 1,
      maximum: chatMessagePageSize.maximum,
      default: chatMessagePageSize.default,
    }),
    sort: sortParameter(['createdAt'], {
      single: true,
      description: 'createdAt:desc (the default, newest first) or createdAt:asc',
    }),
  },
  { additionalProperties: false },
)
export type ChatMessageListQuery = Static<typeof ChatMessageListQuery>

// documents

const documentFields = {
  id: Uuid,
  title: Type.String(),
  version: Type.Integer({
    minimum: 0,
    description: 'the number of edits applied; collab:edit names it as baseVersion',
  }),
  ownerId: Type.String({
    format: 'uuid',
    maxLength: 36,
    description: 'who created it; a member that cannot be removed',
  }),
  members: Type.Array(Uuid, {
    description: 'user ids of the members (who may edit it on /collab), oldest first',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

/** A document in a list: everything but its content (up to 1 MB each). */
export const DocumentSummary = Type.Object(documentFields, { additionalProperties: false })
export type DocumentSummary = Static<typeof DocumentSummary>

export const CollaborativeDocument = Type.Object(
  { ...documentFields, content: Type.String() },
  { additionalProperties: false },
)
export type CollaborativeDocument = Static<typeof CollaborativeDocument>

export const CreateDocumentBody = Type.Object(
  {
    title: VisibleText({ minLength: 1, maxLength: 200, description: 'stored trimmed' }),
    content: Type.Optional(
      Type.String({
        maxLength: documentContentMaxLength,
        pattern: '^[^\\u0000]*$',
        description: 'the initial text (empty when absent)',
      }),
    ),
  },
  { additionalProperties: false },
)
export type CreateDocumentBody = Static<typeof CreateDocumentBody>

export const documentSortFields = ['createdAt', 'updatedAt', 'title'] as const

/** GET /documents: page, limit, sort (newest first by default). A user sees their own and shared ones; an admin all. */
export const DocumentListQuery = QueryObject(
  { ...pageParameters, sort: sortQuery(documentSortFields, 'updatedAt:desc') },
  { additionalProperties: false },
)
export type DocumentListQuery = Static<typeof DocumentListQuery>

export const DocumentIdParams = Type.Object({ docId: Uuid })
export type DocumentIdParams = Static<typeof DocumentIdParams>

export const DocumentMemberParams = Type.Object({ docId: Uuid, userId: Uuid })
export type DocumentMemberParams = Static<typeof DocumentMemberParams>
