// /api/v1/documents: collaborative documents (a user's own and shared ones, or every one for an admin), their
// members (who may open and edit them on /collab), and deleting them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AddMemberBody,
  CollaborativeDocument,
  CreateDocumentBody,
  DocumentIdParams,
  DocumentListQuery,
  DocumentMemberParams,
  DocumentSummary,
  Member,
  Paginated,
} from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import { Type } from 'typebox'
import { type DocumentUseCases, documentHref } from '../../domain/documents.ts'
import { type DocumentsGuards, documentsGuards } from './access.ts'

export type DocumentsRoutesOptions = {
  documents: DocumentUseCases
  /** by default documentsGuards(app) */
  guards?: DocumentsGuards
}

export const documentsRoutes: FastifyPluginAsyncTypebox<DocumentsRoutesOptions> = async (app, options) => {
  const { documents } = options
  const onRequest = (options.guards ?? documentsGuards(app)).authenticated ?? []
  const tags = ['documents']

  app.post(
    '/documents',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Create a document (version 0): the caller owns it and is its first member; 201 with Location',
        security: security.requires('documents:write'),
        body: CreateDocumentBody,
        response: { 201: CollaborativeDocument, ...errorResponses(401, 403, 422) },
      },
    },
    async (request, reply) => {
      const document = await documents.createDocument(request.body, await app.principalOf(request))
      return reply.code(201).header('location', documentHref(document.id)).send(document)
    },
  )

  app.get(
    '/documents',
    {
      onRequest,
      schema: {
        tags,
        summary:
          "List documents without their content (a user's: those they own or are a member of; an admin's: all): page, limit, sort",
        security: security.requires('documents:read'),
        querystring: DocumentListQuery,
        response: { 200: Paginated(DocumentSummary), ...errorResponses(401, 422) },
      },
    },
    async (request) =>
      documents.listDocuments(
        request.query,
        await app.principalOf(request),
        request.url.split('?')[0] ?? request.url,
      ),
  )

  app.get(
    '/documents/:docId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'A document with its content, version and members: its members and admins',
        description:
          'A document the caller is not a member of answers 404, as an unknown one does: its existence is not told.',
        security: security.requires('documents:read'),
        params: DocumentIdParams,
        response: { 200: CollaborativeDocument, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => documents.getDocument(request.params.docId, await app.principalOf(request)),
  )

  app.delete(
    '/documents/:docId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Delete a document (its owner or an admin): 204',
        description: 'Another member is 403; anyone else 404.',
        security: security.requires('documents:write'),
        params: DocumentIdParams,
        response: {
          204: Type.Null({ description: 'Deleted (no body)' }),
          ...errorResponses(401, 403, 404, 422),
        },
      },
    },
    async (request, reply) => {
      await documents.deleteDocument(request.params.docId, await app.principalOf(request))
      return reply.code(204).send(undefined as never)
    },
  )

  app.post(
    '/documents/:docId/members',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Add a member (the owner or an admin): 201 with Location, or 200 when they are a member already',
        description:
          'Another member is 403; a caller who is not a member (and not an admin) is 404, the document is not told.',
        security: security.requires('documents:write'),
        params: DocumentIdParams,
        body: AddMemberBody,
        response: { 200: Member, 201: Member, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const { docId } = request.params
      const { member, created } = await documents.addMember(
        docId,
        request.body.userId,
        await app.principalOf(request),
      )
      if (!created) return reply.code(200).send(member)
      return reply
        .code(201)
        .header('location', `${documentHref(docId)}/members/${member.userId}`)
        .send(member)
    },
  )

  app.delete(
    '/documents/:docId/members/:userId',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Remove a member (the owner or an admin; a member may remove themselves): 204',
        description:
          'The owner cannot be removed (409). A user who is not a member is 404; another member removing someone is 403.',
        security: security.requires('documents:write'),
        params: DocumentMemberParams,
        response: {
          204: Type.Null({ description: 'Removed (no body)' }),
          ...errorResponses(401, 403, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const { docId, userId } = request.params
      await documents.removeMember(docId, userId, await app.principalOf(request))
      return reply.code(204).send(undefined as never)
    },
  )
}
