// The users projection fed by auth's user events on the real broker (topics of this file's own, one partition each so
// that a marker published after an event is consumed after it): user.registered (1.1.0 and 1.0.0 without status),
// user.profile_changed (newest version wins, a redelivery changes nothing), user.removed (a tombstone that takes the
// user's posts and that no later event undoes), and a user seeded from their own token replaced by their event.
import { randomUUID } from 'node:crypto'
import type { EventData } from '@meridian/contracts'
import { type CatalogueEvent, createEvent, createEventProducer, type EventProducer } from '@meridian/events'
import {
  accessToken,
  asAdmin,
  eventually,
  freshEventTopics,
  type TestEventTopics,
  testKafka,
  tokenEnv,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ContentEventType } from '../src/events/consumers.ts'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'
import { graphql } from './support/graphql.ts'

const eventTypes: ContentEventType[] = ['user.registered', 'user.profile_changed', 'user.removed']

let content: ContentTestApp
let topics: Record<ContentEventType, TestEventTopics>
let producer: EventProducer
let group: string

beforeAll(async () => {
  const made = await Promise.all(eventTypes.map((type) => freshEventTopics(type, 3, 1)))
  topics = Object.fromEntries(eventTypes.map((type, index) => [type, made[index]])) as typeof topics
  producer = await createEventProducer(testKafka())
  group = uniqueName('content')
  const topicNames = Object.fromEntries(eventTypes.map((type) => [type, topics[type].topic]))
  // the app's own consumers, on this file's topics and group; no relay (post.created is not this file's)
  content = await buildContentTestApp(
    { ...tokenEnv },
    { events: { consumers: { group, topics: topicNames, retryDelaysMs: [200, 200, 200] }, relay: false } },
  )
})

afterAll(async () => {
  await producer?.disconnect()
  for (const each of Object.values(topics ?? {})) await each.delete()
  await content?.close()
})

// --- auth's events, as auth publishes them (keyed by the user) ---

const userRegistered = (data: Partial<EventData<'user.registered'>> = {}) =>
  createEvent(
    'user.registered',
    {
      userId: randomUUID(),
      email: `reader.${randomUUID().slice(0, 8)}@example.com`,
      name: 'Ada Lovelace',
      role: 'user',
      status: 'active',
      ...data,
    },
    { source: 'auth' },
  )

const profileChanged = (
  registered: CatalogueEvent<'user.registered'>,
  changes: Partial<EventData<'user.profile_changed'>> & { version: number },
) =>
  createEvent(
    'user.profile_changed',
    {
      userId: registered.data.userId,
      email: registered.data.email,
      name: registered.data.name,
      role: registered.data.role,
      status: registered.data.status ?? 'active',
      ...changes,
    },
    { source: 'auth' },
  )

const userRemoved = (userId: string) => createEvent('user.removed', { userId }, { source: 'auth' })

async function publish(event: CatalogueEvent<ContentEventType>): Promise<void> {
  await producer.publish([
    {
      topic: topics[event.type as ContentEventType].topic,
      key: (event.data as { userId: string }).userId,
      value: JSON.stringify(event),
      headers: { 'message-id': event.id },
    },
  ])
}

/** How many times the consumers recorded the event in the inbox (once it was handled and committed). */
async function inboxCount(eventId: string): Promise<number> {
  const [row] = await content.sql<{ count: number }[]>`
    select count(*)::int as count from inbox where consumer_group = ${group} and event_id = ${eventId}`
  return row?.count ?? 0
}

/** Publishes the events and waits until the consumers have handled the last one. */
async function publishAndWait(...events: CatalogueEvent<ContentEventType>[]): Promise<void> {
  for (const event of events) await publish(event)
  const last = events.at(-1)!
  await eventually(`${last.type} ${last.id} is handled`, async () => (await inboxCount(last.id)) >= 1)
}

// --- what content answers ---

interface UserAnswer {
  user: { id: string; name: string; email: string | null } | null
}

async function userAsAdmin(id: string) {
  const answer = await graphql<UserAnswer>(content, 'query ($id: ID!) { user(id: $id) { id name email } }', {
    variables: { id },
    headers: asAdmin(),
  })
  expect(answer.body.errors).toBeUndefined()
  return answer.body.data?.user
}

async function postIds(): Promise<string[]> {
  const answer = await graphql<{ posts: { id: string }[] }>(content, 'query { posts(limit: 100) { id } }', {
    headers: asAdmin(),
  })
  expect(answer.body.errors).toBeUndefined()
  return (answer.body.data?.posts ?? []).map((post) => post.id)
}

async function createPostAs(authorId: string, title: string): Promise<string> {
  const answer = await graphql<{ createPost: { id: string } }>(
    content,
    'mutation ($authorId: ID!, $title: String!) { createPost(title: $title, content: "Body", authorId: $authorId) { id } }',
    { variables: { authorId, title }, headers: { authorization: `Bearer ${accessToken('user', authorId)}` } },
  )
  expect(answer.body.errors).toBeUndefined()
  return answer.body.data!.createPost.id
}

/** The stored row, tombstones included. */
async function storedUser(id: string) {
  const [row] = await content.sql<
    { name: string; version: number; removedAt: Date | null; updatedAt: Date }[]
  >`select name, version, removed_at, updated_at from users where id = ${id}`
  return row
}

describe('the users projection on the broker', () => {
  it('when user.registered arrives, then the user is visible through user(id)', async () => {
    const registered = userRegistered({ name: 'Grace Hopper' })
    const { userId } = registered.data
    expect(await userAsAdmin(userId)).toBeNull()

    await publishAndWait(registered)

    const answer = await graphql<UserAnswer>(content, 'query ($id: ID!) { user(id: $id) { id name } }', {
      variables: { id: userId },
      headers: asAdmin(),
    })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ data: { user: { id: userId, name: 'Grace Hopper' } } })
    expect(await storedUser(userId)).toMatchObject({ version: 1, removedAt: null })
  })

  it('when a 1.0.0 user.registered without status arrives, then the user is kept as active', async () => {
    const userId = randomUUID()
    const email = `legacy.${userId.slice(0, 8)}@example.com`
    const registered = createEvent(
      'user.registered',
      { userId, email, name: 'Old Timer', role: 'user' },
      { source: 'auth', schemaVersion: '1.0.0' },
    )
    expect(registered.schemaVersion).toBe('1.0.0')
    expect(registered.data).not.toHaveProperty('status')

    await publishAndWait(registered)

    expect(await userAsAdmin(userId)).toEqual({ id: userId, name: 'Old Timer', email })
    const [row] = await content.sql<{ status: string }[]>`select status from users where id = ${userId}`
    expect(row?.status).toBe('active')
  })

  it('when user.profile_changed with a higher version arrives, then the name changes and an admin sees the new email', async () => {
    const registered = userRegistered({ name: 'Before Change' })
    const { userId } = registered.data
    await publishAndWait(registered)

    const newEmail = `after.${userId.slice(0, 8)}@example.com`
    await publishAndWait(profileChanged(registered, { name: 'After Change', email: newEmail, version: 2 }))

    expect(await userAsAdmin(userId)).toEqual({ id: userId, name: 'After Change', email: newEmail })
    expect((await storedUser(userId))?.version).toBe(2)
    // another user sees the new name but no email
    const other = await graphql<UserAnswer>(content, 'query ($id: ID!) { user(id: $id) { id name email } }', {
      variables: { id: userId },
      headers: { authorization: `Bearer ${accessToken('user')}` },
    })
    expect(other.body.data?.user).toEqual({ id: userId, name: 'After Change', email: null })
  })

  it('when an older version arrives after a newer one, then it is ignored', async () => {
    const registered = userRegistered({ name: 'Version One' })
    const { userId } = registered.data
    await publishAndWait(registered, profileChanged(registered, { name: 'Version Three', version: 3 }))
    expect((await userAsAdmin(userId))?.name).toBe('Version Three')

    const older = profileChanged(registered, {
      name: 'Version Two',
      email: `stale.${userId.slice(0, 8)}@example.com`,
      version: 2,
    })
    await publishAndWait(older)

    expect(await inboxCount(older.id)).toBe(1)
    expect(await userAsAdmin(userId)).toEqual({
      id: userId,
      name: 'Version Three',
      email: registered.data.email,
    })
    expect((await storedUser(userId))?.version).toBe(3)
  })

  it('when the same event is delivered twice, then the second delivery changes nothing', async () => {
    const registered = userRegistered({ name: 'Twice Told' })
    const { userId } = registered.data
    const changed = profileChanged(registered, { name: 'Told Once', version: 2 })
    await publishAndWait(registered, changed)
    const before = await storedUser(userId)
    expect(before).toMatchObject({ name: 'Told Once', version: 2 })

    // the same event again, then a marker on the same (single-partition) topic, handled after it
    const marker = profileChanged(userRegistered(), { version: 1 })
    await publish(changed)
    await publishAndWait(marker)

    expect(await inboxCount(changed.id)).toBe(1)
    expect(await storedUser(userId)).toEqual(before)
    expect(await userAsAdmin(userId)).toEqual({ id: userId, name: 'Told Once', email: registered.data.email })
  })

  it('when user.removed arrives, then user(id) is null and their posts are gone from posts; others stay', async () => {
    const leaving = userRegistered({ name: 'Leaving Soon' })
    const staying = userRegistered({ name: 'Staying On' })
    await publishAndWait(leaving, staying)
    const leavingPosts = [
      await createPostAs(leaving.data.userId, 'First'),
      await createPostAs(leaving.data.userId, 'Second'),
    ]
    const stayingPost = await createPostAs(staying.data.userId, 'Mine')
    expect(await postIds()).toEqual(expect.arrayContaining([...leavingPosts, stayingPost]))

    await publishAndWait(userRemoved(leaving.data.userId))

    expect(await userAsAdmin(leaving.data.userId)).toBeNull()
    const after = await postIds()
    expect(after).toContain(stayingPost)
    expect(after.filter((id) => leavingPosts.includes(id))).toEqual([])
    const [left] = await content.sql<{ count: number }[]>`
      select count(*)::int as count from posts where author_id = ${leaving.data.userId}`
    expect(left?.count).toBe(0)
    expect((await storedUser(leaving.data.userId))?.removedAt).toBeInstanceOf(Date)
  })

  it('when user.profile_changed arrives after user.removed, then the user does not come back', async () => {
    const registered = userRegistered({ name: 'Gone For Good' })
    const { userId } = registered.data
    await publishAndWait(registered)
    await publishAndWait(userRemoved(userId))
    expect(await userAsAdmin(userId)).toBeNull()

    const late = profileChanged(registered, { name: 'Back Again', version: 7 })
    await publishAndWait(late)

    expect(await inboxCount(late.id)).toBe(1)
    expect(await userAsAdmin(userId)).toBeNull()
    expect(await storedUser(userId)).toMatchObject({ name: 'Gone For Good', version: 1 })
    expect((await storedUser(userId))?.removedAt).toBeInstanceOf(Date)
    // nor can they post again from their token
    const answer = await graphql(
      content,
      'mutation ($id: ID!) { createPost(title: "Hi", content: "Again", authorId: $id) { id } }',
      { variables: { id: userId }, headers: { authorization: `Bearer ${accessToken('user', userId)}` } },
    )
    expect(answer.body.errors?.map((error) => error.extensions.code)).toEqual(['NOT_FOUND'])
  })

  it('when a user unknown to content posts with their token and then their user.registered arrives, then the event replaces the seed', async () => {
    const userId = randomUUID()
    const postId = await createPostAs(userId, 'Before my event')
    // seeded at version 0 from the token's claims (accessToken's name)
    expect(await userAsAdmin(userId)).toEqual({
      id: userId,
      name: 'user of the tests',
      email: `user.${userId.slice(0, 8)}@example.com`,
    })
    expect((await storedUser(userId))?.version).toBe(0)

    const registered = userRegistered({
      userId,
      name: 'Registered Name',
      email: `registered.${userId.slice(0, 8)}@example.com`,
    })
    await publishAndWait(registered)

    expect(await userAsAdmin(userId)).toEqual({
      id: userId,
      name: 'Registered Name',
      email: registered.data.email,
    })
    expect((await storedUser(userId))?.version).toBe(1)
    const answer = await graphql<{ posts: { id: string; author: { id: string; name: string } }[] }>(
      content,
      'query { posts(limit: 100) { id author { id name } } }',
      { headers: asAdmin() },
    )
    expect(answer.body.data?.posts.find((post) => post.id === postId)?.author).toEqual({
      id: userId,
      name: 'Registered Name',
    })
  })
})
