// /api/v1/chat/rooms: chat rooms (a user's own, or every one for an admin), their members (who may join the room on
// /chat) and their message history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AddMemberBody,
  ChatMessage,
  ChatMessageListQuery,
  ChatRoom,
  ChatRoomIdParams,
  ChatRoomListQuery,
  ChatRoomMemberParams,
  CreateChatRoomBody,
  Member,
  Paginated,
} from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { type ChatUseCases, chatRoomHref } from '../../domain/chat.ts'
import { type ChatRoomsGuards, chatRoomsGuards } from './access.ts'

export type ChatRoomsRoutesOptions = {
  chat: ChatUseCases
  /** by default chatRoomsGuards(app) */
  guards?: ChatRoomsGuards
}

const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? request.url

export const chatRoomsRoutes: FastifyPluginAsyncTypebox<ChatRoomsRoutesOptions> = async (app, options) => {
  const { chat } = options
  const onRequest = (options.guards ?? chatRoomsGuards(app)).authenticated ?? []
  const tags = ['chat rooms']

  app.post(
    '/chat/rooms',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Create a chat room: the caller owns it and is its first member; 201 with Location',
        security: security.requires('chat:write'),
        body: CreateChatRoomBody,
        response: { 201: ChatRoom, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const room = await chat.createRoom(request.body, await app.principalOf(request))
      return reply.code(201).header('location', chatRoomHref(room.id)).send(room)
    },
  )

  app.get(
    '/chat/rooms',
    {
      onRequest,
      schema: {
        tags,
        summary: "List chat rooms (a user's: those they are a member of; an admin's: all): page, limit, sort",
        security: security.requires('chat:read'),
        querystring: ChatRoomListQuery,
        response: { 200: Paginated(ChatRoom), ...errorResponses(401, 422) },
      },
    },
    async (request) => chat.listRooms(request.query, await app.principalOf(request), pathOf(request)),
  )

  app.get(
    '/chat/rooms/:roomId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'A chat room with its members: its members and admins',
        description:
          'A room the caller is not a member of answers 404, as an unknown one does: its existence is not told.',
        security: security.requires('chat:read'),
        params: ChatRoomIdParams,
        response: { 200: ChatRoom, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => chat.getRoom(request.params.roomId, await app.principalOf(request)),
  )

  app.post(
    '/chat/rooms/:roomId/members',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Add a member (the room owner or an admin): 201 with Location, or 200 when they are a member already',
        description:
          'Another member is 403; a caller who is not a member (and not an admin) is 404, the room is not told.',
        security: security.requires('chat:write'),
        params: ChatRoomIdParams,
        body: AddMemberBody,
        response: { 200: Member, 201: Member, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const { roomId } = request.params
      const { member, created } = await chat.addMember(
        roomId,
        request.body.userId,
        await app.principalOf(request),
      )
      if (!created) return reply.code(200).send(member)
      return reply
        .code(201)
        .header('location', `${chatRoomHref(roomId)}/members/${member.userId}`)
        .send(member)
    },
  )

  app.delete(
    '/chat/rooms/:roomId/members/:userId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Remove a member (the room owner or an admin; a member may remove themselves): 204',
        description:
          'The owner cannot be removed (409). A user who is not a member is 404; another member removing someone is 403.',
        security: security.requires('chat:write'),
        params: ChatRoomMemberParams,
        response: {
          204: Type.Null({ description: 'Removed (no body)' }),
          ...errorResponses(401, 403, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const { roomId, userId } = request.params
      await chat.removeMember(roomId, userId, await app.principalOf(request))
      return reply.code(204).send(undefined as never)
    },
  )

  app.get(
    '/chat/rooms/:roomId/messages',
    {
      onRequest,
      schema: {
        tags,
        summary: "A room's messages, newest first, 50 a page by default: its members and admins",
        security: security.requires('chat:read'),
        params: ChatRoomIdParams,
        querystring: ChatMessageListQuery,
        response: { 200: Paginated(ChatMessage), ...errorResponses(401, 404, 422) },
      },
    },
    async (request) =>
      chat.listMessages(
        request.params.roomId,
        request.query,
        await app.principalOf(request),
        pathOf(request),
      ),
  )
}
