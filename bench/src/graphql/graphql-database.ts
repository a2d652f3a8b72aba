// bench:graphql's database: the run's own (bench_graphql_<random>), migrated as content migrates, its users projection
// seeded directly with SQL (normally auth's events fill it) and posts spread over them; dropped when the run ends.

import { migrateContentDatabase } from '@meridian/content/migrations'
import { createRunDatabase } from '../run-database.ts'

/** Seeded posts have these titles; anything else was created by a run and is removed by `removeCreatedPosts`. */
const seedTitlePattern = 'Seed post %'

/** A seeded user, as the bench's tokens name them (sub, name, email). */
export interface SeededUser {
  id: string
  name: string
  email: string
}

export interface GraphqlDatabase {
  name: string
  url: string
  /** `users` users (version 1, active, role user) and `posts` posts, one minute apart, round-robin over the users */
  seed(users: number, posts: number): Promise<SeededUser[]>
  /** removes the posts a run created and their outbox rows, so each pair starts from the same tables */
  removeCreatedPosts(): Promise<number>
  drop(): Promise<void>
}

export async function createGraphqlDatabase(serverUrl: string): Promise<GraphqlDatabase> {
  const { name, url, sql, drop } = await createRunDatabase(serverUrl, 'bench_graphql', migrateContentDatabase)

  return {
    name,
    url,
    async seed(users, posts) {
      const seeded = await sql<SeededUser[]>`
        insert into users (id, name, email, role, status, version)
        select gen_random_uuid(), 'Seed User ' || g, 'seed-' || g || '@example.com', 'user', 'active', 1
        from generate_series(1, ${users}::int) as g
        returning id, name, email`
      await sql`
        with numbered as (select id, row_number() over (order by name) - 1 as n from users)
        insert into posts (author_id, title, content, created_at)
        select numbered.id, 'Seed post ' || g, 'The seeded content of post ' || g || '.',
               now() - make_interval(mins => g)
        from generate_series(1, ${posts}::int) as g
        join numbered on numbered.n = g % ${users}::int`
      await sql`analyze users`
      await sql`analyze posts`
      return [...seeded]
    },
    async removeCreatedPosts() {
      const result = await sql`delete from posts where title not like ${seedTitlePattern}`
      await sql`truncate outbox`
      await sql`vacuum analyze posts`
      return result.count
    },
    drop,
  }
}
