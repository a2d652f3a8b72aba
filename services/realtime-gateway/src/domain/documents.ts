// Collaborative document use cases: documents and their members (REST), and what the /collab channel does with them:
// opening a document (members only) and applying an edit made on a version, serialized by a compare-and-set on that
// version in PostgreSQL (so two editors on two instances never both apply an edit to the same version).
import {
  AppError,
  type CollabDocumentState,
  type CollaborativeDocument,
  type CreateDocumentBody,
  type DocumentListQuery,
  type DocumentSummary,
  type EditOperation,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Sql, transaction } from '@meridian/db'
import type { Principal } from '@meridian/service-kit'
import type {
  DocumentRecord,
  DocumentSummaryRecord,
  DocumentsRepository,
} from '../data/documents-repository.ts'
import { applyOperation } from './edit-operations.ts'
import {
  type ChannelAccess,
  createMembershipUseCases,
  isAdmin,
  isUuid,
  mayManage,
  memberIdOf,
  noChannel,
  ownerIdOf,
} from './memberships.ts'

export const documentHref = (id: string) => `/api/v1/documents/${id}`

/** The channel's room of a document: every socket that opened it, on every instance. */
export const documentChannel = (docId: string) => `doc:${docId}`
export const documentChannelPrefix = 'doc:'

/** The refusal of a document's channel to anyone who is not its member (and for a document that does not exist). */
export const notDocumentMember = 'Not a member of this document'

export function presentDocumentSummary(document: DocumentSummaryRecord): DocumentSummary {
  return {
    id: document.id,
    title: document.title,
    version: document.version,
    ownerId: document.ownerId,
    members: document.members,
    createdAt: document.createdAt.toISOString(),
    updatedAt: document.updatedAt.toISOString(),
  }
}

export function presentDocument(document: DocumentRecord): CollaborativeDocument {
  return { ...presentDocumentSummary(document), content: document.content }
}

/** Who is editing on the channel. */
export interface Editor {
  userId: string
  username: string
}

export type EditOutcome =
  | { outcome: 'applied'; version: number }
  /** the edit was made on another version than the stored one: the client rebases on this state */
  | { outcome: 'conflict'; serverVersion: number; serverContent: string }

export interface DocumentUseCasesDependencies {
  documents: DocumentsRepository
  sql: Sql
  /** the channel, told of removed members and deleted documents (their sockets leave the room); none by default */
  access?: ChannelAccess
}

export function createDocumentUseCases({ documents, sql, access = noChannel }: DocumentUseCasesDependencies) {
  const memberships = createMembershipUseCases({
    label: 'Document',
    find: (id) => documents.findDocument(id),
    members: documents.members,
    access,
  })

  /** The document's content and version, if the editor is its member; refused with notDocumentMember otherwise. */
  async function stateForMember(docId: string, editor: Editor) {
    const state = isUuid(editor.userId)
      ? await documents.findStateForMember(docId, editor.userId.toLowerCase())
      : undefined
    if (!state) throw AppError.forbidden(notDocumentMember)
    return state
  }

  return {
    /** A new document, owned by the caller, who is its first member (one transaction). */
    async createDocument(body: CreateDocumentBody, principal: Principal): Promise<CollaborativeDocument> {
      const ownerId = ownerIdOf(principal, 'documents')
      const id = await transaction(sql, async (tx) => {
        const created = await documents.insertDocument(
          { title: body.title.trim(), content: body.content ?? '', ownerId },
          tx,
        )
        await documents.members.add(created.id, ownerId, tx)
        return created.id
      })
      const document = await documents.findDocument(id)
      if (!document) throw new Error(`document ${id} was created but cannot be read`)
      return presentDocument(document)
    },

    /** The document, for its members and admins; 404 for anyone else (its existence is not told). */
    async getDocument(docId: string, principal: Principal): Promise<CollaborativeDocument> {
      return presentDocument(await memberships.visible(docId, principal))
    },

    /** A page of documents (no content): every one for an admin, the caller's (owned or shared) for anyone else. */
    async listDocuments(
      query: DocumentListQuery,
      principal: Principal,
      path: string,
    ): Promise<ListEnvelope<DocumentSummary>> {
      if (isAdmin(principal)) {
        const request = documents.listRequests.documents(query)
        const { rows, total } = await documents.listDocuments(request)
        return listEnvelope(path, query, request, rows.map(presentDocumentSummary), total)
      }
      const memberId = memberIdOf(principal)
      const request = documents.listRequests.memberDocuments({ ...query, memberId: memberId ?? undefined })
      const { rows, total } =
        memberId === null ? { rows: [], total: 0 } : await documents.listMemberDocuments(request)
      return listEnvelope(path, query, request, rows.map(presentDocumentSummary), total)
    },

    addMember: memberships.addMember,
    removeMember: memberships.removeMember,

    /** Whether the user may be in the document's channel room (a socket recovered after a short disconnection). */
    isDocumentMember: memberships.isMember,

    /** Deletes the document (its owner or an admin; another member is 403, anyone else 404); its sockets leave it. */
    async deleteDocument(docId: string, principal: Principal): Promise<void> {
      const document = await memberships.visible(docId, principal)
      if (!mayManage(principal, document)) throw AppError.forbidden('Only the owner deletes this document')
      // gone meanwhile: deleted all the same
      await documents.deleteDocument(docId)
      access.removed(docId)
    },

    /** The state a member gets on opening the document on the channel; anyone else is refused. */
    async openDocument(docId: string, editor: Editor): Promise<CollabDocumentState> {
      const state = await stateForMember(docId, editor)
      return { docId, content: state.content, version: state.version }
    },

    /**
     * Applies the editor's operation, made on `baseVersion`: checked against the stored content (422 with the
     * problems), then written only if the document is still at that version. Made on another version, or beaten to
     * it by a concurrent edit, it is a conflict carrying the stored state.
     */
    async applyEdit(
      docId: string,
      editor: Editor,
      operation: EditOperation,
      baseVersion: number,
    ): Promise<EditOutcome> {
      const state = await stateForMember(docId, editor)
      if (state.version !== baseVersion) {
        return { outcome: 'conflict', serverVersion: state.version, serverContent: state.content }
      }
      const applied = applyOperation(state.content, operation)
      if (!applied.ok) throw AppError.validation(applied.problems, 'Invalid edit operation')
      const version = await documents.compareAndSetContent({
        id: docId,
        userId: editor.userId.toLowerCase(),
        baseVersion,
        content: applied.content,
      })
      if (version !== undefined) return { outcome: 'applied', version }
      // another edit won the race (or the editor was removed, or the document deleted): tell the state as it is now
      const now = await stateForMember(docId, editor)
      return { outcome: 'conflict', serverVersion: now.version, serverContent: now.content }
    },
  }
}

export type DocumentUseCases = ReturnType<typeof createDocumentUseCases>
