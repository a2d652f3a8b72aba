// Server B without the chassis: plain fastify(), no logger, no plugins, no schemas, the same SQL and the same
// response shapes as the auth service's GET and POST /api/v1/users.

import { randomUUID } from 'node:crypto'
import type { Sql } from '@meridian/db'
import fastify, { type FastifyInstance } from 'fastify'
import { hashPassword } from './argon2id.ts'

interface UserRow {
  id: string
  name: string
  email: string
  role: string
  status: string
  age: number | null
  version: number
  createdAt: Date
  updatedAt: Date
}

interface NewUserBody {
  name: string
  email: string
  password: string
  role?: string
  status?: string
  age?: number
}

// what insert returns (the repository's column list)
const publicColumns = ['id', 'name', 'email', 'role', 'status', 'age', 'version', 'created_at', 'updated_at']

const present = (row: UserRow) => ({
  id: row.id,
  name: row.name,
  email: row.email,
  role: row.role,
  status: row.status,
  age: row.age,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

export function buildBareApp(sql: Sql): FastifyInstance {
  const app = fastify()

  app.get('/api/v1/users', async (request) => {
    const query = request.query as { page?: string; limit?: string }
    const page = Number(query.page ?? 1)
    const limit = Number(query.limit ?? 20)
    // the statement the chassis sends for this request's shape, written out as a plain tagged template
    const [rows, [count]] = await Promise.all([
      sql<UserRow[]>`
        select id, name, email, role, status, age, created_at, updated_at from users
        order by created_at desc, id asc
        limit ${limit} offset ${(page - 1) * limit}`,
      sql<{ total: number }[]>`select count(*)::int as total from users`,
    ])
    const total = count?.total ?? 0
    const totalPages = Math.ceil(total / limit)
    const link = (target: number) => `/api/v1/users?page=${target}&limit=${limit}`
    return {
      data: rows.map(present),
      meta: { page, limit, total, totalPages },
      links: {
        self: link(page),
        first: link(1),
        prev: page > 1 ? link(Math.min(page - 1, Math.max(totalPages, 1))) : null,
        next: page < totalPages ? link(page + 1) : null,
        last: link(Math.max(totalPages, 1)),
      },
    }
  })

  app.post('/api/v1/users', async (request, reply) => {
    const body = request.body as NewUserBody
    const passwordHash = await hashPassword(body.password)
    // the same work as the chassis: the user and its user.registered outbox row in one transaction
    const [row] = await sql.begin(async (tx) => {
      const inserted = await tx<UserRow[]>`
        insert into users ${tx({
          name: body.name.trim(),
          email: body.email.trim().toLowerCase(),
          password_hash: passwordHash,
          role: body.role ?? 'user',
          status: body.status ?? 'active',
          age: body.age ?? null,
        })}
        returning ${tx(publicColumns)}`
      const user = inserted[0]
      if (user) {
        const event = {
          id: randomUUID(),
          type: 'user.registered',
          source: 'auth',
          schemaVersion: '1.0.0',
          timestamp: new Date().toISOString(),
          data: { userId: user.id, email: user.email, name: user.name, role: user.role },
        }
        await tx`
          insert into outbox (event_type, aggregate_id, payload)
          values ('user.registered', ${user.id}, ${tx.json(event)})`
        await tx`select pg_notify('meridian_outbox', '')`
      }
      return inserted
    })
    if (!row) throw new Error('insert into users returned no row')
    return reply
      .code(201)
      .header('location', `/api/v1/users/${row.id}`)
      .header('etag', `"${row.id}.${row.version}"`)
      .send(present(row))
  })

  return app
}
