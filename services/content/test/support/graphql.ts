// Speaking GraphQL to a content app: an operation over HTTP (app.inject), and the users a test needs in the
// projection, written as auth's events would (through the same use case the consumer calls).
import { randomUUID } from 'node:crypto'
import { accessToken } from '@meridian/testkit'
import type { ContentTestApp } from './app.ts'

export interface GraphQLAnswer<Data = Record<string, unknown>> {
  status: number
  headers: Record<string, unknown>
  body: {
    data?: Data | null
    errors?: { message: string; path?: (string | number)[]; extensions: Record<string, unknown> }[]
  }
}

/** POSTs an operation to /graphql with `headers` (say, a bearer token). */
export async function graphql<Data = Record<string, unknown>>(
  target: Pick<ContentTestApp, 'app'>,
  query: string,
  { variables, headers = {} }: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<GraphQLAnswer<Data>> {
  const answer = await target.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  })
  return { status: answer.statusCode, headers: answer.headers, body: answer.json() }
}

export interface TestUser {
  id: string
  name: string
  email: string
  role: 'user' | 'admin'
  /** Authorization headers with a token of this user */
  headers: { authorization: string }
}

/** A user known to content as if auth's user.registered had arrived, with a token of theirs. */
export async function registeredUser(
  service: Pick<ContentTestApp, 'users' | 'sql'>,
  {
    role = 'user',
    name = `Writer ${randomUUID().slice(0, 6)}`,
  }: { role?: 'user' | 'admin'; name?: string } = {},
): Promise<TestUser> {
  const id = randomUUID()
  const email = `${id.slice(0, 8)}@example.com`
  await service.sql.begin((tx) =>
    service.users.applyRegistered({ userId: id, name, email, role, status: 'active' }, tx),
  )
  return { id, name, email, role, headers: { authorization: `Bearer ${accessToken(role, id)}` } }
}
