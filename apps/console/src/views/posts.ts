// Posts over GraphQL: the newest posts with their authors, writing one (createPost as yourself), and the posts others
// write arriving live through the postCreated subscription.
import type { PostView } from '@meridian/contracts'
import { graphql, subscriptionsClient } from '../graphql.ts'
import { errorBox, h, loading, panel, show, submitWith, timeOf } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

interface ListedPost extends Pick<PostView, 'id' | 'title' | 'content' | 'createdAt'> {
  author: { id: string; name: string }
}

const postFields = 'id title content createdAt author { id name }'

export function postsView({ session }: ViewContext): View {
  const list = h('ol', { class: 'posts', 'aria-live': 'polite' })
  const body = h('div', {}, loading('the posts'))
  const errors = h('div', { 'aria-live': 'assertive' })
  const shown = new Set<string>()
  const live = subscriptionsClient(session.token)

  function item(post: ListedPost): HTMLElement {
    return h(
      'li',
      { 'data-post-id': post.id },
      h('h3', {}, post.title),
      h('p', {}, post.content),
      h('small', {}, `by ${post.author.name} · `, timeOf(post.createdAt)),
    )
  }

  function add(post: ListedPost, where: 'start' | 'end'): void {
    if (shown.has(post.id)) return
    shown.add(post.id)
    if (where === 'start') list.prepend(item(post))
    else list.append(item(post))
    show(body, list)
  }

  async function read(): Promise<void> {
    try {
      const data = await graphql<{ posts: ListedPost[] }>(
        session.token,
        `{ posts(limit: 20) { ${postFields} } }`,
      )
      for (const post of data.posts) add(post, 'end')
      if (data.posts.length === 0 && shown.size === 0) show(body, h('p', {}, 'No posts yet.'))
    } catch (error) {
      show(body, errorBox(error))
    }
  }

  const title = h('input', { id: 'post-title', name: 'title', required: true, maxlength: 200 })
  const content = h('textarea', { id: 'post-content', name: 'content', required: true, rows: 4 })
  const submit = h('button', { type: 'submit' }, 'Publish')
  const form = h(
    'form',
    {
      'aria-label': 'Write a post',
      onsubmit: submitWith(submit, errors, async () => {
        const data = await graphql<{ createPost: ListedPost }>(
          session.token,
          `mutation($title: String!, $content: String!, $authorId: ID!) {
              createPost(title: $title, content: $content, authorId: $authorId) { ${postFields} }
            }`,
          { title: title.value, content: content.value, authorId: session.user.id },
        )
        add(data.createPost, 'start')
        title.value = ''
        content.value = ''
      }),
    },
    h('label', { for: 'post-title' }, 'Title'),
    title,
    h('label', { for: 'post-content' }, 'Text'),
    content,
    submit,
  )

  const stop = live.subscribe<{ postCreated: ListedPost }>(
    { query: `subscription { postCreated { ${postFields} } }` },
    {
      next: ({ data }) => data && add(data.postCreated, 'start'),
      error: (error) => show(errors, errorBox(Array.isArray(error) ? (error[0]?.message ?? error) : error)),
      complete: () => {},
    },
  )

  void read()
  return {
    element: panel(
      'posts',
      'Posts',
      form,
      errors,
      h('h2', {}, 'Newest posts (new ones appear as they are written)'),
      body,
    ),
    close() {
      stop()
      void live.dispose()
    },
  }
}
