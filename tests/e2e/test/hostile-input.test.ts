// Hostile input through the gateway, as an attacker would send it: what the second hostile review found, end to end.
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const client = e2eClient(inject('system'))

/** A string as long as the 1 MB body limit allows in one field, ending in the NUL every text field refuses. */
const longestNulEnded = `${'a'.repeat(999_000)}\u0000`

interface ErrorBody {
  success: false
  error: { code: string; details?: { field: string; message: string }[] }
}

describe('hostile input through the gateway', () => {
  let admin: Caller

  beforeAll(async () => {
    admin = await client.loginAdmin()
  })

  it('when a user is registered with a body-limit-long name ending in NUL, then 422 names the field and no user exists', async () => {
    const email = `long-${randomUUID()}@example.test`
    const answer = await client.request<ErrorBody>('POST', '/api/v1/users', {
      body: { name: longestNulEnded, email, password: 'a long enough passphrase' },
    })
    expect(answer.status).toBe(422)
    expect(answer.body.error.code).toBe('VALIDATION_ERROR')
    expect(answer.body.error.details?.map((detail) => detail.field)).toContain('name')

    // nothing was written: the same e-mail address is still free
    const again = await client.request('POST', '/api/v1/users', {
      body: { name: 'Short Name', email, password: 'a long enough passphrase' },
    })
    expect(again.status).toBe(201)
  })

  it('when a chat room and a document are named with body-limit-long text ending in NUL, then each is refused with 422', async () => {
    for (const [path, field] of [
      ['/api/v1/chat/rooms', 'name'],
      ['/api/v1/documents', 'title'],
    ] as const) {
      const answer = await client.request<ErrorBody>('POST', path, {
        token: admin.token,
        body: { [field]: longestNulEnded },
      })
      expect(answer.status, path).toBe(422)
      expect(
        answer.body.error.details?.map((detail) => detail.field),
        path,
      ).toContain(field)
    }
  })
})
