// The demo's chat room (a short conversation, sent over the realtime channel as the console sends it) and its shared
// document, both the demo admin's with the demo customer as a member. Found again by name, so a second seed adds
// no room, no document and no message.
import type { ChatMessage, ChatRoom, CollaborativeDocument, DocumentSummary } from '@meridian/contracts'
import { createRealtimeClient, type RealtimeClient, request } from '@meridian/realtime-client'
import { demoConversation, demoDocumentContent, demoDocumentTitle, demoRoomName } from './content.ts'
import type { GatewayApi, Page } from './gateway-api.ts'
import type { SignedIn } from './orders.ts'

export interface CollaborationSteps {
  api: GatewayApi
  gatewayUrl: string
  admin: SignedIn
  customer: SignedIn
}

export interface DemoRoom {
  id: string
  created: boolean
  /** messages this run sent (0 when the room had some already) */
  messagesSent: number
}

export interface DemoDocument {
  id: string
  created: boolean
}

/** Makes `userId` a member (201, or 200 when they already are). */
async function addMember(steps: CollaborationSteps, path: string, userId: string): Promise<void> {
  await steps.api.call('POST', path, {
    token: steps.admin.token,
    body: { userId },
    expected: [200, 201],
  })
}

/** A connected /chat socket of one user, in the room. */
async function chatSocket(client: RealtimeClient, roomId: string) {
  const socket = client.namespace('/chat')
  if (!socket.connected) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the /chat namespace did not connect in 15 s')), 15_000)
      socket.once('connect', () => {
        clearTimeout(timer)
        resolve()
      })
      socket.once('connect_error', (error) => {
        clearTimeout(timer)
        reject(new Error(`the /chat namespace refused: ${error.message}`))
      })
    })
  }
  await request(socket, 'chat:join', { roomId })
  return socket
}

/** The conversation, each line from its speaker, one after the other (each acknowledged, so stored, in order). */
async function converse(steps: CollaborationSteps, roomId: string): Promise<number> {
  const clients = {
    admin: createRealtimeClient({
      url: steps.gatewayUrl,
      token: () => steps.admin.token,
      reconnection: false,
    }),
    customer: createRealtimeClient({
      url: steps.gatewayUrl,
      token: () => steps.customer.token,
      reconnection: false,
    }),
  }
  try {
    const sockets = {
      admin: await chatSocket(clients.admin, roomId),
      customer: await chatSocket(clients.customer, roomId),
    }
    for (const line of demoConversation) {
      await request(sockets[line.from], 'chat:message', { roomId, text: line.text })
    }
    return demoConversation.length
  } finally {
    clients.admin.close()
    clients.customer.close()
  }
}

export async function ensureDemoRoom(steps: CollaborationSteps): Promise<DemoRoom> {
  const { api, admin, customer } = steps
  const existing = await api.find<ChatRoom>(
    '/api/v1/chat/rooms?sort=name:asc',
    admin.token,
    (room) => room.name === demoRoomName && room.ownerId === admin.id,
  )
  const room =
    existing ??
    (await api.call<ChatRoom>('POST', '/api/v1/chat/rooms', {
      token: admin.token,
      body: { name: demoRoomName },
    }))
  await addMember(steps, `/api/v1/chat/rooms/${room.id}/members`, customer.id)
  const said = await api.call<Page<ChatMessage>>('GET', `/api/v1/chat/rooms/${room.id}/messages?limit=1`, {
    token: admin.token,
  })
  const messagesSent = said.data.length === 0 ? await converse(steps, room.id) : 0
  return { id: room.id, created: existing === undefined, messagesSent }
}

export async function ensureDemoDocument(steps: CollaborationSteps): Promise<DemoDocument> {
  const { api, admin, customer } = steps
  const existing = await api.find<DocumentSummary>(
    '/api/v1/documents?sort=title:asc',
    admin.token,
    (document) => document.title === demoDocumentTitle && document.ownerId === admin.id,
  )
  const document =
    existing ??
    (await api.call<CollaborativeDocument>('POST', '/api/v1/documents', {
      token: admin.token,
      body: { title: demoDocumentTitle, content: demoDocumentContent },
    }))
  await addMember(steps, `/api/v1/documents/${document.id}/members`, customer.id)
  return { id: document.id, created: existing === undefined }
}
