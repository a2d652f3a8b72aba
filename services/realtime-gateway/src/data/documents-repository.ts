// Collaborative documents and their members in PostgreSQL: SQL only, plain objects out; every function takes the
// pool or an open transaction. Content changes only through `compareAndSetContent`, which applies an edit to the
// version it was made on, or to nothing.
import { defineList, type ListRequestOf, type ListResult, type Queryable } from '@meridian/db'
import { createMembershipsRepository } from './memberships.ts'

/** A document without its content, as lists show it. */
export interface DocumentSummaryRecord {
  id: string
  title: string
  version: number
  ownerId: string
  /** member user ids, oldest membership first */
  members: string[]
  createdAt: Date
  updatedAt: Date
}

export interface DocumentRecord extends DocumentSummaryRecord {
  content: string
}

/** What an edit works on: the content at a version. */
export interface DocumentState {
  id: string
  content: string
  version: number
}

const documentColumns = {
  id: 'id',
  title: 'title',
  version: 'version',
  ownerId: 'owner_id',
  members: 'members',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  memberId: 'member_id',
} as const
const documentFields = ['id', 'title', 'version', 'ownerId', 'members', 'createdAt', 'updatedAt'] as const
const documentSorts = ['createdAt', 'updatedAt', 'title'] as const

/** GET /documents of an admin: every document, newest first. */
export const documentList = defineList({
  table: 'document_records',
  columns: documentColumns,
  selectable: documentFields,
  sortable: documentSorts,
  defaultSort: 'createdAt:desc',
  // no sparse fieldset: every field of the record, always
  alwaysSelected: documentFields,
})

/** GET /documents of a user: the documents whose member they are (memberId, set by the use case, never the client). */
export const memberDocumentList = defineList({
  table: 'document_records_by_member',
  columns: documentColumns,
  selectable: documentFields,
  sortable: documentSorts,
  filterable: ['memberId'],
  defaultSort: 'createdAt:desc',
  // no sparse fieldset: every field of the record, always
  alwaysSelected: documentFields,
})

export type DocumentListRequest = ListRequestOf<typeof documentList>
export type MemberDocumentListRequest = ListRequestOf<typeof memberDocumentList>

export function createDocumentsRepository(db: Queryable) {
  return {
    members: createMembershipsRepository(db, { table: 'document_members', resourceColumn: 'document_id' }),

    /** The document, owned by `ownerId`, without members (the caller adds the owner in the same transaction). */
    async insertDocument(
      document: { title: string; content: string; ownerId: string },
      sql: Queryable = db,
    ): Promise<{ id: string }> {
      const [row] = await sql<{ id: string }[]>`
        insert into documents ${sql({ title: document.title, content: document.content, owner_id: document.ownerId })}
        returning id`
      if (!row) throw new Error('insert into documents returned nothing')
      return row
    },

    async findDocument(id: string, sql: Queryable = db): Promise<DocumentRecord | undefined> {
      const [row] = await sql<DocumentRecord[]>`
        select r.id, r.title, r.version, r.owner_id, r.members, r.created_at, r.updated_at, d.content
        from document_records r join documents d on d.id = r.id
        where r.id = ${id}`
      return row
    },

    /** The content and version of a document `userId` is a member of; undefined when it is not (or there is none). */
    async findStateForMember(
      id: string,
      userId: string,
      sql: Queryable = db,
    ): Promise<DocumentState | undefined> {
      const [row] = await sql<DocumentState[]>`
        select d.id, d.content, d.version from documents d
        join document_members m on m.document_id = d.id and m.user_id = ${userId}
        where d.id = ${id}`
      return row
    },

    /**
     * Sets the content and bumps the version, only if the version is still `baseVersion` and `userId` still a member:
     * the new version, or undefined when another edit (from any instance) got there first or the member was removed.
     */
    async compareAndSetContent(
      change: { id: string; userId: string; baseVersion: number; content: string },
      sql: Queryable = db,
    ): Promise<number | undefined> {
      const [row] = await sql<{ version: number }[]>`
        update documents set content = ${change.content}, version = version + 1, updated_at = now()
        where id = ${change.id} and version = ${change.baseVersion}
          and exists (select 1 from document_members where document_id = ${change.id} and user_id = ${change.userId})
        returning version`
      return row?.version
    },

    /** Deletes the document and its members; false when there was none. */
    async deleteDocument(id: string, sql: Queryable = db): Promise<boolean> {
      const deleted = await sql`delete from documents where id = ${id}`
      return deleted.count > 0
    },

    /** List queries checked against their lists' allow-lists (422 VALIDATION_ERROR outside them), for the lists below. */
    listRequests: {
      documents: (query: Parameters<typeof documentList.parse>[0]) => documentList.parse(query),
      memberDocuments: (query: Parameters<typeof memberDocumentList.parse>[0]) =>
        memberDocumentList.parse(query),
    },

    async listDocuments(
      request: DocumentListRequest,
      sql: Queryable = db,
    ): Promise<ListResult<DocumentSummaryRecord>> {
      return documentList.run<DocumentSummaryRecord>(sql, request)
    },

    async listMemberDocuments(
      request: MemberDocumentListRequest,
      sql: Queryable = db,
    ): Promise<ListResult<DocumentSummaryRecord>> {
      return memberDocumentList.run<DocumentSummaryRecord>(sql, request)
    },
  }
}

export type DocumentsRepository = ReturnType<typeof createDocumentsRepository>
