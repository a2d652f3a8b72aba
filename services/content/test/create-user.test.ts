// Content and the real auth service (a process of its own, found in Consul): Mutation.createUser (an admin's user,
// readable at once through the projection and `invited` in auth; auth's refusals relayed; arguments refused before
// auth is called; auth missing from Consul), and auth's other credentials accepted by content end to end: an API key
// (introspected at auth; refused in the URL; a subscription's connection_init), and a cookie session started at
// auth's /login.
import { randomUUID } from 'node:crypto'
import { authNames } from '@meridian/contracts'
import { type AuthProcess, asAdmin, asUser, startAuthProcess, tokenEnv, uniqueName } from '@meridian/testkit'
import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'
import { graphql } from './support/graphql.ts'
import { collect, soon, subscriptionUrl, untilListening } from './support/subscriptions.ts'

let auth: AuthProcess
let content: ContentTestApp
/** an admin of the tests (HS256 token, verified by auth and content alike) */
const admin = asAdmin()

beforeAll(async () => {
  auth = await startAuthProcess()
  content = await buildContentTestApp({ ...tokenEnv, AUTH_SERVICE_NAME: auth.consulName })
})

afterAll(async () => {
  await content?.close()
  await auth?.stop()
})

const createUserMutation =
  'mutation ($name: String!, $email: String!) { createUser(name: $name, email: $email) { id name email } }'

const uniqueEmail = (stem: string) => `${stem}.${randomUUID().slice(0, 8)}@example.com`

/** Calls auth's REST API directly, as a test's client. */
async function authCall(
  method: string,
  path: string,
  { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${auth.baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

/** Every email auth knows (its database is this file's own). */
async function emailsInAuth(): Promise<string[]> {
  const emails: string[] = []
  for (let page = 1; ; page += 1) {
    const answer = await authCall('GET', `/api/v1/users?limit=100&page=${page}`, { headers: admin })
    expect(answer.status).toBe(200)
    const data = answer.body.data as { email: string }[]
    emails.push(...data.map((user) => user.email))
    if (data.length < 100) return emails
  }
}

/** A user with a password registered at auth (open registration), and their token pair from POST /login. */
async function registeredInAuth() {
  const email = uniqueEmail('keyholder')
  const password = 'correct horse battery staple'
  const created = await authCall('POST', '/api/v1/users', { body: { name: 'Key Holder', email, password } })
  expect(created.status).toBe(201)
  const login = await authCall('POST', '/login', { body: { email, password } })
  expect(login.status).toBe(200)
  return { id: created.body.id as string, email, password, accessToken: login.body.accessToken as string }
}

describe('createUser with auth found in Consul', () => {
  it("when an admin creates a user, then content answers auth's user, user(id) reads it at once and auth holds it invited", async () => {
    const email = uniqueEmail('invited')
    const answer = await graphql<{ createUser: { id: string; name: string; email: string } }>(
      content,
      createUserMutation,
      { variables: { name: 'Invited Person', email }, headers: admin },
    )
    expect(answer.status).toBe(200)
    expect(answer.body.errors).toBeUndefined()
    const created = answer.body.data!.createUser
    expect(created).toEqual({ id: expect.any(String), name: 'Invited Person', email })

    // the projection holds auth's answer before any user.registered could arrive
    const read = await graphql(content, 'query ($id: ID!) { user(id: $id) { id name email } }', {
      variables: { id: created.id },
      headers: admin,
    })
    expect(read.body).toEqual({ data: { user: created } })

    const inAuth = await authCall('GET', `/api/v1/users/${created.id}`, { headers: admin })
    expect(inAuth.status).toBe(200)
    expect(inAuth.body).toMatchObject({
      id: created.id,
      name: 'Invited Person',
      email,
      role: 'user',
      status: 'invited',
    })
  })

  it('when a plain user creates a user, then FORBIDDEN and auth has no such user', async () => {
    const email = uniqueEmail('forbidden')
    const answer = await graphql(content, createUserMutation, {
      variables: { name: 'Not Allowed', email },
      headers: asUser(),
    })
    expect(answer.status).toBe(403)
    expect(answer.body.data).toBeNull()
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: 'Only an admin may create a user',
        extensions: { code: 'FORBIDDEN', requestId: expect.any(String) },
      }),
    ])
    expect(await emailsInAuth()).not.toContain(email)
  })

  it("when the email is already in use, then CONFLICT with auth's own message", async () => {
    const email = uniqueEmail('taken')
    const first = await graphql(content, createUserMutation, {
      variables: { name: 'First', email },
      headers: admin,
    })
    expect(first.body.errors).toBeUndefined()
    // what auth itself answers to the same request
    const direct = await authCall('POST', '/api/v1/users', {
      body: { name: 'Second', email },
      headers: admin,
    })
    expect(direct.status).toBe(409)
    expect(direct.body.error.code).toBe('CONFLICT')

    const second = await graphql(content, createUserMutation, {
      variables: { name: 'Second', email },
      headers: admin,
    })
    expect(second.status).toBe(409)
    expect(second.body.data).toBeNull()
    expect(second.body.errors).toHaveLength(1)
    const [error] = second.body.errors!
    expect(error?.message).toBe(direct.body.error.message)
    expect(error?.extensions).toMatchObject({ code: 'CONFLICT', requestId: expect.any(String) })
    expect(error?.extensions.details).toEqual(direct.body.error.details)
    expect((await emailsInAuth()).filter((each) => each === email)).toHaveLength(1)
  })

  it('when the email is invalid or the name empty, then VALIDATION_ERROR naming the field and auth is not called', async () => {
    const before = await emailsInAuth()
    const badEmail = await graphql(content, createUserMutation, {
      variables: { name: 'Valid Name', email: 'not-an-email' },
      headers: admin,
    })
    expect(badEmail.status).toBe(422)
    expect(badEmail.body.errors?.map((error) => error.extensions.code)).toEqual(['VALIDATION_ERROR'])
    expect(badEmail.body.errors?.[0]?.extensions.details).toEqual([
      { field: 'email', message: 'must match format "email"', received: 'not-an-email' },
    ])

    const emptyName = await graphql(content, createUserMutation, {
      variables: { name: '', email: uniqueEmail('nameless') },
      headers: admin,
    })
    expect(emptyName.status).toBe(422)
    expect(emptyName.body.errors?.map((error) => error.extensions.code)).toEqual(['VALIDATION_ERROR'])
    // two rules of the name refuse it (its length, and visible text), both naming the field
    const nameDetails = emptyName.body.errors?.[0]?.extensions.details as { field: string; message: string }[]
    expect(new Set(nameDetails.map((detail) => detail.field))).toEqual(new Set(['name']))
    expect(nameDetails).toContainEqual({
      field: 'name',
      message: 'must not have fewer than 1 characters',
      received: '',
    })

    expect(await emailsInAuth()).toEqual(before)
  })

  it('when AUTH_SERVICE_NAME names nothing in Consul, then SERVICE_UNAVAILABLE', async () => {
    const orphan = await buildContentTestApp({
      ...tokenEnv,
      AUTH_SERVICE_NAME: uniqueName('no-auth-here'),
      AUTH_DISCOVERY_WAIT_MS: '300',
    })
    try {
      const email = uniqueEmail('nowhere')
      const answer = await graphql(orphan, createUserMutation, {
        variables: { name: 'Nowhere', email },
        headers: admin,
      })
      expect(answer.status).toBe(503)
      expect(answer.body.data).toBeNull()
      expect(answer.body.errors?.map((error) => error.extensions.code)).toEqual(['SERVICE_UNAVAILABLE'])
      const [row] = await orphan.sql`select 1 from users where email = ${email}`
      expect(row).toBeUndefined()
    } finally {
      await orphan.close()
    }
  })
})

describe("auth's other credentials on content", () => {
  it('when a user of auth queries posts with an API key of theirs in X-API-Key, then the query runs', async () => {
    const holder = await registeredInAuth()
    const created = await authCall('POST', '/api/v1/api-keys', {
      body: { name: 'content reader', scopes: ['posts:read', 'posts:write'] },
      headers: { authorization: `Bearer ${holder.accessToken}` },
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ userId: holder.id, key: expect.stringMatching(/^mk_/) })

    const answer = await graphql<{ posts: { id: string }[] }>(content, 'query { posts { id } }', {
      headers: { [authNames.apiKeyHeader]: created.body.key },
    })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ data: { posts: expect.any(Array) } })
    // the key is the holder's: they post as themself (seeded from auth's introspection) and see their own email
    const posted = await graphql<{ createPost: { author: { id: string; email: string | null } } }>(
      content,
      'mutation ($id: ID!) { createPost(title: "By key", content: "Hello", authorId: $id) { author { id email } } }',
      { variables: { id: holder.id }, headers: { [authNames.apiKeyHeader]: created.body.key } },
    )
    expect(posted.body.errors).toBeUndefined()
    expect(posted.body.data?.createPost.author).toEqual({ id: holder.id, email: holder.email })
  })

  it("when an admin's API key lacks users:write, then createUser is INSUFFICIENT_SCOPE naming it and auth has no such user; with it, the user is created", async () => {
    const holder = await registeredInAuth()
    const promoted = await authCall('PATCH', `/api/v1/users/${holder.id}`, {
      body: { role: 'admin' },
      headers: admin,
    })
    expect(promoted.status).toBe(200)
    const keyWith = async (scopes: string[]) => {
      const created = await authCall('POST', '/api/v1/api-keys', {
        body: { name: 'people ops', scopes, userId: holder.id },
        headers: admin,
      })
      expect(created.status).toBe(201)
      return { [authNames.apiKeyHeader]: created.body.key as string }
    }
    const refusedEmail = uniqueEmail('scoped-out')
    const refused = await graphql(content, createUserMutation, {
      variables: { name: 'Not With This Key', email: refusedEmail },
      headers: await keyWith(['posts:read', 'users:read']),
    })
    expect(refused.status).toBe(403)
    expect(refused.body.errors).toEqual([
      expect.objectContaining({
        message: 'Insufficient scope: this operation needs users:write',
        extensions: { code: 'INSUFFICIENT_SCOPE', requestId: expect.any(String) },
      }),
    ])
    expect(await emailsInAuth()).not.toContain(refusedEmail)

    const email = uniqueEmail('scoped-in')
    const created = await graphql<{ createUser: { email: string } }>(content, createUserMutation, {
      variables: { name: 'With The Right Key', email },
      headers: await keyWith(['posts:read', 'users:write']),
    })
    expect(created.body.errors).toBeUndefined()
    expect(created.body.data?.createUser.email).toBe(email)
    expect(await emailsInAuth()).toContain(email)
  })

  it('when a subscription connection gives an API key in connection_init ({apiKey}), then postCreated is heard with it', async () => {
    const holder = await registeredInAuth()
    const created = await authCall('POST', '/api/v1/api-keys', {
      body: { name: 'content listener', scopes: ['posts:read'] },
      headers: { authorization: `Bearer ${holder.accessToken}` },
    })
    expect(created.status).toBe(201)
    await content.app.listen({ port: 0, host: '127.0.0.1' })
    const client = createClient({
      url: subscriptionUrl(content.app),
      webSocketImpl: WebSocket,
      connectionParams: { apiKey: created.body.key },
    })
    try {
      const heard = collect<{ postCreated: { title: string } }>(
        client,
        'subscription { postCreated { title } }',
      )
      await untilListening(content.redis, `${content.config.CONTENT_PUBSUB_PREFIX}post.created`, [
        { app: content.app, listeners: 1 },
      ])
      const posted = await graphql(
        content,
        'mutation ($id: ID!) { createPost(title: "Heard by key", content: "x", authorId: $id) { id } }',
        { variables: { id: holder.id }, headers: { authorization: `Bearer ${holder.accessToken}` } },
      )
      expect(posted.body.errors).toBeUndefined()
      await soon('the post', () => heard.values.length === 1 || heard.errors.length > 0)
      expect(heard.errors).toEqual([])
      expect(heard.values).toEqual([{ postCreated: { title: 'Heard by key' } }])
    } finally {
      await client.dispose()
    }
  })

  it("when the API key is wrong, then UNAUTHORIZED 'Invalid API key'", async () => {
    const answer = await graphql(content, 'query { posts { id } }', {
      headers: {
        [authNames.apiKeyHeader]: `mk_${randomUUID().slice(0, 8)}_${randomUUID().replaceAll('-', '')}`,
      },
    })
    expect(answer.status).toBe(401)
    expect(answer.body.data).toBeNull()
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: 'Invalid API key',
        extensions: { code: 'UNAUTHORIZED', requestId: expect.any(String) },
      }),
    ])
  })

  it('when an API key is in the URL query, then 401 before GraphQL runs', async () => {
    const answer = await content.app.inject({
      method: 'POST',
      url: '/graphql?api_key=mk_abcdefgh_0123456789',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: 'query { posts { id } }' }),
    })
    expect(answer.statusCode).toBe(401)
    const body = answer.json()
    expect(body).toEqual({
      data: null,
      errors: [
        expect.objectContaining({
          message: 'API keys are accepted only in the X-API-Key header',
          extensions: { code: 'UNAUTHORIZED', requestId: answer.headers['x-request-id'] },
        }),
      ],
    })
  })

  it('when a user logs in to auth with mode=session, then their session cookie works on content', async () => {
    const holder = await registeredInAuth()
    const login = await fetch(`${auth.baseUrl}/login?mode=session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: holder.email, password: holder.password }),
    })
    expect(login.status).toBe(204)
    const sessionCookie = login.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0]!)
      .find((pair) => pair.startsWith(`${authNames.sessionCookie}=`))
    expect(sessionCookie).toEqual(expect.stringMatching(new RegExp(`^${authNames.sessionCookie}=.+`)))

    const answer = await graphql(content, 'query { posts { id } }', { headers: { cookie: sessionCookie! } })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ data: { posts: expect.any(Array) } })
    // the session is the user's own: once content knows them (as their user.registered would tell it), they may post
    // as themself, and see their own email
    await content.sql.begin((tx) =>
      content.users.applyRegistered(
        { userId: holder.id, name: 'Key Holder', email: holder.email, role: 'user', status: 'active' },
        tx,
      ),
    )
    const posted = await graphql<{
      createPost: { id: string; author: { id: string; email: string | null } }
    }>(
      content,
      'mutation ($id: ID!) { createPost(title: "By session", content: "Hello", authorId: $id) { id author { id email } } }',
      { variables: { id: holder.id }, headers: { cookie: sessionCookie! } },
    )
    expect(posted.body.errors).toBeUndefined()
    expect(posted.body.data?.createPost.author).toEqual({ id: holder.id, email: holder.email })

    // without the cookie, the same operation is refused
    const anonymous = await graphql(content, 'query { posts { id } }')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.errors?.map((error) => error.extensions.code)).toEqual(['UNAUTHORIZED'])
  })
})
