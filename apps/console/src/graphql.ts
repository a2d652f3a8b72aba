// GraphQL as the console speaks it: operations by POST /graphql through the gateway with the user's token (errors as
// ApiErrors with extensions.code and the request id), and subscriptions over the same path's WebSocket with the
// graphql-ws client, the token in connection_init.
import { type Client, createClient } from 'graphql-ws'
import { ApiError } from './api.ts'

interface GraphQLError {
  message: string
  extensions?: { code?: string; requestId?: string }
}

export async function graphql<Data>(
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Data> {
  let response: Response
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    })
  } catch {
    throw new ApiError('The gateway cannot be reached', 0, 'NETWORK_ERROR', undefined)
  }
  const body = (await response.json().catch(() => ({}))) as { data?: Data | null; errors?: GraphQLError[] }
  const [error] = body.errors ?? []
  if (error) {
    throw new ApiError(
      error.message,
      response.status,
      error.extensions?.code ?? 'ERROR',
      error.extensions?.requestId,
    )
  }
  if (!response.ok || !body.data)
    throw new ApiError(`GraphQL answered ${response.status}`, response.status, 'ERROR', undefined)
  return body.data
}

/** A subscriptions client of the page, signed in with `token` (graphql-transport-ws). */
export function subscriptionsClient(token: string): Client {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
  return createClient({
    url: `${scheme}://${location.host}/graphql`,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
  })
}
