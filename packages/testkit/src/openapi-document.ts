// A service's OpenAPI document as its app serves it (/docs/json, what its validator and its clients read): the one
// source of the checks every service runs, its scopes (scope-checks.ts) and its inputs' bounds (input-bounds-check.ts).
import { expect } from 'vitest'

/** The part of a Fastify instance that serves the document. */
export interface DocumentedApp {
  inject(options: { method: 'GET'; url: string }): PromiseLike<{ statusCode: number; json(): unknown }>
}

/** The document, read through the app (no port): `Document` is the shape the caller reads of it. */
export async function openApiDocumentOf<Document = unknown>(app: DocumentedApp): Promise<Document> {
  const answer = await app.inject({ method: 'GET', url: '/docs/json' })
  expect(answer.statusCode).toBe(200)
  return answer.json() as Document
}
