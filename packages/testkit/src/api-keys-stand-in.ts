// A stand-in for the auth SERVICE's API-key introspection (another Meridian service, never an engine: PostgreSQL,
// Kafka, Consul and Redis are the real ones): a node:http server answering POST /internal/api-keys/introspect from
// the keys a test made, registered in the real Consul under a unique name, so that a service's app (its
// AUTH_SERVICE_NAME) finds it and resolves keys through the kit exactly as it does with auth.
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { consulApi } from './consul.ts'
import { testServiceCredential } from './tokens.ts'
import { uniqueName } from './unique-name.ts'

/** What auth answers about an active key (contracts' ApiKeyIntrospection). */
interface ActiveKey {
  active: true
  subject: string
  role: string
  name: string
  email: string
  /** whether the owner's address is verified, when the test says */
  emailVerified?: boolean
  scopes: string[]
  apiKeyId: string
}

export interface StandInKeyOptions {
  /** the scopes the key is limited to */
  scopes: readonly string[]
  /** its owner's role as auth would read it now; admin by default, so that only the scope can refuse */
  role?: string
  /** its owner's id; a fresh one by default */
  subject?: string
  /** whether its owner's address is verified (auth's `emailVerified`); not said by default */
  emailVerified?: boolean
}

export interface ApiKeysStandIn {
  /** its name in Consul: give it to the service's app as AUTH_SERVICE_NAME */
  name: string
  /** a new key, answered active with these scopes and role; the key itself, for X-API-Key */
  keyFor(options: StandInKeyOptions): string
  /** how many introspections it answered */
  introspections(): number
  /** leaves Consul, then stops answering */
  close(): Promise<void>
}

const introspectPath = '/internal/api-keys/introspect'

export async function startApiKeysStandIn(): Promise<ApiKeysStandIn> {
  const keys = new Map<string, ActiveKey>()
  let answered = 0
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== introspectPath) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{}')
        return
      }
      // as auth's /internal/ routes: only a caller with the services' credential (what every service's wiring sends)
      if (request.headers['x-service-credential'] !== testServiceCredential) {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{}')
        return
      }
      const { key } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { key?: string }
      answered += 1
      // as auth answers: everything about a known key, nothing but `active: false` about any other
      const body = (key !== undefined && keys.get(key)) || { active: false }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  const name = uniqueName('auth-keys')
  const id = `${name}-${randomUUID()}`
  const { baseUrl, headers } = consulApi()
  // no checks: an instance without checks is passing for as long as it is registered
  const registered = await fetch(`${baseUrl}/v1/agent/service/register`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ ID: id, Name: name, Address: '127.0.0.1', Port: port }),
  })
  if (!registered.ok) {
    server.close()
    throw new Error(`Consul refused the API-key stand-in: ${registered.status}`)
  }

  return {
    name,
    keyFor({ scopes, role = 'admin', subject = randomUUID(), emailVerified }) {
      const prefix = randomBytes(6).toString('hex')
      const key = `mk_${prefix}_${randomBytes(32).toString('base64url')}`
      keys.set(key, {
        active: true,
        subject,
        role,
        name: `${role} of the tests`,
        email: `${role}.${subject.slice(0, 8)}@example.com`,
        ...(emailVerified === undefined ? {} : { emailVerified }),
        scopes: [...scopes],
        apiKeyId: randomUUID(),
      })
      return key
    },
    introspections: () => answered,
    async close() {
      await fetch(`${baseUrl}/v1/agent/service/deregister/${encodeURIComponent(id)}`, {
        method: 'PUT',
        headers,
      })
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
}
