// API scopes at content: /graphql needs posts:read, and each mutation its own scope too (posts:write for createPost);
// an API key served here, resolved at auth through Consul by the kit.
import { describeServiceScopes } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildContentTestApp } from './support/app.ts'
import { graphql, registeredUser } from './support/graphql.ts'

const createPost = /* GraphQL */ `
  mutation($authorId: ID!) { createPost(title: "Scoped", content: "Posted with a key", authorId: $authorId) { id } }
`

describeServiceScopes({
  service: 'content',
  build: (env) => buildContentTestApp(env),
  async served({ built, keyFor }) {
    const writer = await registeredUser(built, { name: 'Kee Holder' })
    const withScopes = (scopes: string[]) => ({
      'x-api-key': keyFor({ scopes, role: 'user', subject: writer.id }),
    })
    const posted = await graphql<{ createPost: { id: string } }>(built, createPost, {
      variables: { authorId: writer.id },
      headers: withScopes(['posts:read', 'posts:write']),
    })
    expect(posted.body.errors).toBeUndefined()
    const read = await graphql<{ posts: { id: string }[] }>(built, '{ posts { id } }', {
      headers: withScopes(['posts:read']),
    })
    expect(read.body.data?.posts.map((post) => post.id)).toContain(posted.body.data?.createPost.id)

    // reading is not writing: the mutation needs posts:write as well
    const refused = await graphql(built, createPost, {
      variables: { authorId: writer.id },
      headers: withScopes(['posts:read']),
    })
    expect(refused.status).toBe(403)
    expect(refused.body.errors?.[0]).toMatchObject({
      message: 'Insufficient scope: this operation needs posts:write',
      extensions: { code: 'INSUFFICIENT_SCOPE' },
    })
  },
})
