// The realtime-gateway app (chat rooms and documents served by it) for the REST tests of those resources, with use
// cases of the same database beside it for the tests' data (messages as the channel stores them).
import { tokenEnv } from '@meridian/testkit'
import { createChatRepository } from '../../src/data/chat-repository.ts'
import { createDocumentsRepository } from '../../src/data/documents-repository.ts'
import { type ChatUseCases, createChatUseCases } from '../../src/domain/chat.ts'
import { createDocumentUseCases, type DocumentUseCases } from '../../src/domain/documents.ts'
import { buildRealtimeGatewayTestApp, type RealtimeGatewayTestApp } from './app.ts'

export type CollaborationTestApp = RealtimeGatewayTestApp & {
  chat: ChatUseCases
  documents: DocumentUseCases
}

export async function buildCollaborationTestApp(
  env: Record<string, string> = {},
): Promise<CollaborationTestApp> {
  const gateway = await buildRealtimeGatewayTestApp({ ...tokenEnv, ...env })
  return Object.assign(gateway, useCasesOf(gateway))
}

/** The use cases on an instance's database, built as app.ts builds them. */
export function useCasesOf(gateway: Pick<RealtimeGatewayTestApp, 'sql'>): {
  chat: ChatUseCases
  documents: DocumentUseCases
} {
  const { sql } = gateway
  return {
    chat: createChatUseCases({ chat: createChatRepository(sql), sql }),
    documents: createDocumentUseCases({ documents: createDocumentsRepository(sql), sql }),
  }
}

export type Headers = Record<string, string>

/** A request to the app of `built()` (read when called: the app is built in beforeAll), with a JSON body if given. */
export const injector =
  (built: () => CollaborationTestApp) =>
  (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
    built().app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    })
