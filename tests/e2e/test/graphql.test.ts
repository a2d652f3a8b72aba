// GraphQL end to end, through the gateway only: posts over HTTP, the postCreated subscription with a real
// graphql-ws client over the gateway's WebSocket pass-through (two content instances run: src/global-setup.ts), and
// users as content learns them from auth's events on Kafka — registered, invited by createUser, renamed, removed.
import { randomBytes } from 'node:crypto'
import { eventually } from '@meridian/testkit'
import { type Client, createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import WebSocket from 'ws'
import { type Caller, type Customer, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
const clients: Client[] = []

interface GraphQLBody<Data> {
  data?: Data | null
  errors?: { message: string; extensions: { code: string; requestId: string } }[]
}

/** An operation through the gateway's /graphql; its errors fail the call unless `allowErrors`. */
async function graphql<Data>(
  caller: Caller,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; body: GraphQLBody<Data> }> {
  const answer = await client.request<GraphQLBody<Data>>('POST', '/graphql', {
    token: caller.token,
    body: { query, ...(variables ? { variables } : {}) },
  })
  return { status: answer.status, body: answer.body }
}

/** A graphql-ws client (graphql-transport-ws) through the gateway, signed in as `caller`. */
function subscriptionsOf(caller: Caller): Client {
  const subscriptions = createClient({
    url: `${system.gatewayUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${caller.token}` },
    lazy: false,
  })
  clients.push(subscriptions)
  return subscriptions
}

interface HeardPost {
  id: string
  title: string
  author: { id: string; name: string }
}

/** Subscribes to postCreated; resolves once the server has started the subscription (an acknowledged connection). */
async function listen(subscriptions: Client): Promise<HeardPost[]> {
  const heard: HeardPost[] = []
  await new Promise<void>((resolve, reject) => {
    subscriptions.on('connected', () => resolve())
    subscriptions.subscribe<{ postCreated: HeardPost }>(
      { query: 'subscription { postCreated { id title author { id name } } }' },
      {
        next: ({ data }) => data && heard.push(data.postCreated),
        error: (error) => reject(new Error(`postCreated failed: ${JSON.stringify(error)}`)),
        complete: () => {},
      },
    )
  })
  return heard
}

afterAll(async () => {
  await Promise.all(clients.map((subscriptions) => subscriptions.dispose()))
})

describe('GraphQL through the gateway', () => {
  let admin: Caller
  let author: Customer
  let reader: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    author = await client.registerCustomer()
    reader = await client.registerCustomer()
  })

  it('when a customer posts, then subscribers connected through the gateway hear it, and posts lists it', async () => {
    // two subscribers: with two content instances behind the gateway, a post made on one reaches both
    const heardByReader = await listen(subscriptionsOf(reader))
    const heardByAuthor = await listen(subscriptionsOf(author))
    // a subscription has no acknowledgement, and its instance subscribes to Redis on its first subscriber: probe
    // posts until both subscribers hear one, then the post the test is about
    const createPost = (title: string) =>
      graphql<{ createPost: { id: string } }>(
        author,
        'mutation($title: String!, $authorId: ID!) { createPost(title: $title, content: "Live over the gateway", authorId: $authorId) { id } }',
        { title, authorId: author.id },
      )
    await eventually('both subscribers hear a probe post', async () => {
      const probe = (await createPost(`Probe ${randomBytes(3).toString('hex')}`)).body.data?.createPost.id
      await new Promise((resolve) => setTimeout(resolve, 300))
      return [heardByReader, heardByAuthor].every((heard) => heard.some((post) => post.id === probe))
    })
    const title = `Hello from e2e ${randomBytes(3).toString('hex')}`

    const created = await createPost(title)
    expect(created.body.errors).toBeUndefined()
    const postId = created.body.data!.createPost.id

    for (const heard of [heardByReader, heardByAuthor]) {
      await eventually('postCreated arrives', async () => heard.some((post) => post.id === postId))
      expect(heard.find((post) => post.id === postId)).toEqual({
        id: postId,
        title,
        author: { id: author.id, name: 'E2E Customer' },
      })
    }
    const listed = await graphql<{ posts: { id: string; title: string }[] }>(
      reader,
      '{ posts(limit: 5) { id title } }',
    )
    expect(listed.body.data!.posts).toContainEqual({ id: postId, title })
  })

  it("when a customer queries with an API key of theirs, then content resolves it at auth's /internal/ route (the run's service credential) and answers", async () => {
    const created = await client.request<{ key: string }>('POST', '/api/v1/api-keys', {
      token: reader.token,
      body: { name: 'e2e posts reader', scopes: ['posts:read'] },
    })
    expect(created.status).toBe(201)
    const ask = (headers: Record<string, string>) =>
      fetch(`${system.gatewayUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: '{ posts(limit: 1) { id } }' }),
        signal: AbortSignal.timeout(30_000),
      })
    const answer = await ask({ 'x-api-key': created.body.key })
    const body = (await answer.json()) as GraphQLBody<{ posts: unknown[] }>
    expect({ status: answer.status, errors: body.errors }).toEqual({ status: 200, errors: undefined })
    expect(Array.isArray(body.data?.posts)).toBe(true)
    // a client's own X-Service-Credential changes nothing: the gateway drops it, and it is no credential of a user
    const guessed = await ask({ 'x-service-credential': 'insecure-development-service-credential-0001' })
    expect(guessed.status).toBe(401)
  })

  it('when GraphQL is asked without a credential, then UNAUTHORIZED with the request id, through the gateway', async () => {
    const answer = await client.request<GraphQLBody<unknown>>('POST', '/graphql', {
      body: { query: '{ posts { id } }' },
    })
    expect(answer.status).toBe(401)
    expect(answer.body.errors?.[0]).toMatchObject({
      message: 'Missing token',
      extensions: { code: 'UNAUTHORIZED', requestId: answer.headers.get('x-request-id') },
    })
  })

  it("when auth registers, renames and removes a user, then content follows auth's events", async () => {
    const newcomer = await client.registerCustomer()
    const byId = 'query($id: ID!) { user(id: $id) { id name } }'
    await eventually(
      'user.registered reached content',
      async () =>
        (await graphql<{ user: { name: string } | null }>(admin, byId, { id: newcomer.id })).body.data?.user
          ?.name === 'E2E Customer',
    )
    await client.request('PATCH', `/api/v1/users/${newcomer.id}`, {
      token: admin.token,
      body: { name: 'Renamed Customer' },
    })
    await eventually(
      'user.profile_changed reached content',
      async () =>
        (await graphql<{ user: { name: string } | null }>(admin, byId, { id: newcomer.id })).body.data?.user
          ?.name === 'Renamed Customer',
    )
    const removed = await client.request('DELETE', `/api/v1/users/${newcomer.id}`, { token: admin.token })
    expect(removed.status).toBe(204)
    await eventually(
      'user.removed reached content',
      async () =>
        (await graphql<{ user: unknown }>(admin, byId, { id: newcomer.id })).body.data?.user === null,
    )
  })

  it('when an admin creates a user with createUser, then auth has them invited, and a password set by the admin lets them in', async () => {
    const email = `invited-${randomBytes(4).toString('hex')}@example.com`
    const created = await graphql<{ createUser: { id: string; name: string; email: string } }>(
      admin,
      'mutation($email: String!) { createUser(name: "Ines Invited", email: $email) { id name email } }',
      { email },
    )
    expect(created.body.errors).toBeUndefined()
    const { id } = created.body.data!.createUser
    expect(created.body.data!.createUser).toEqual({ id, name: 'Ines Invited', email })

    const inAuth = await client.request<{ status: string }>('GET', `/api/v1/users/${id}`, {
      token: admin.token,
    })
    expect(inAuth.body.status).toBe('invited')
    // an invited user cannot sign in: no password yet
    expect(
      (await client.request('POST', '/login', { body: { email, password: 'whatever-it-is' } })).status,
    ).toBe(401)

    const password = randomBytes(12).toString('base64url')
    const set = await client.request('PUT', `/api/v1/users/${id}/password`, {
      token: admin.token,
      body: { newPassword: password },
    })
    expect(set.status).toBe(204)
    const token = await client.login(email, password)
    const own = await graphql<{ user: { email: string } }>(
      { email, token },
      'query($id: ID!) { user(id: $id) { email } }',
      { id },
    )
    expect(own.body.data).toEqual({ user: { email } })

    // a customer may not invite anyone
    const refused = await graphql(
      author,
      'mutation { createUser(name: "Nope", email: "nope@example.com") { id } }',
    )
    expect(refused.status).toBe(403)
    expect(refused.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN')
  })
})
