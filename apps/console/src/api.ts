// The gateway's public API as the console calls it: same origin, the signed-in user's bearer token, and failures as
// ApiErrors carrying the error envelope's message, code and request id (the page shows them).
import type { ErrorEnvelope } from '@meridian/contracts'

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly requestId: string | undefined,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export interface ApiOptions {
  token?: string | undefined
  body?: unknown
  headers?: Record<string, string>
}

/** The error a failed answer stands for: the envelope's when it sent one, else its status. */
export function apiErrorOf(status: number, body: unknown, requestId: string | undefined): ApiError {
  const envelope = body as Partial<ErrorEnvelope> | undefined
  const error = envelope?.error
  if (error && typeof error.message === 'string') {
    return new ApiError(error.message, status, error.code ?? 'ERROR', error.requestId ?? requestId)
  }
  return new ApiError(`The server answered ${status}`, status, 'HTTP_ERROR', requestId)
}

/** A request to the gateway; resolves with the parsed body of a 2xx answer, rejects with an ApiError otherwise. */
export async function api<Body>(method: string, path: string, options: ApiOptions = {}): Promise<Body> {
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers: {
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    })
  } catch {
    throw new ApiError('The gateway cannot be reached', 0, 'NETWORK_ERROR', undefined)
  }
  const text = await response.text()
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  if (!response.ok) throw apiErrorOf(response.status, body, response.headers.get('x-request-id') ?? undefined)
  return body as Body
}
