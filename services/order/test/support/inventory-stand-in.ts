// A stand-in for the inventory SERVICE (another Meridian service, never an engine: PostgreSQL, Kafka, Consul and
// Redis are the real ones): a node:http server that answers POST /internal/products/lookup from a fixed catalogue,
// registered in the real Consul under a unique name, so that the order app finds it as it finds inventory. Like
// inventory, it answers 401 to a lookup without the test service credential.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ProductSummary } from '@meridian/contracts'
import { consulApi, testServiceCredential, uniqueName } from '@meridian/testkit'

export interface InventoryStandIn {
  /** its service name in Consul: give it to the order app as INVENTORY_SERVICE_NAME */
  name: string
  port: number
  /** the ids of every lookup it answered, in order */
  lookups: string[][]
  /** the X-Service-Credential of every lookup it was sent (answered or refused), in order */
  credentials: (string | undefined)[]
  /** closes the HTTP server but stays registered: an instance Consul lists that refuses connections */
  stopAnswering(): Promise<void>
  close(): Promise<void>
}

export async function startInventoryStandIn(catalogue: readonly ProductSummary[]): Promise<InventoryStandIn> {
  const byId = new Map(catalogue.map((product) => [product.id, product]))
  const lookups: string[][] = []
  const credentials: (string | undefined)[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/internal/products/lookup') {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{}')
        return
      }
      const credential = request.headers['x-service-credential']
      credentials.push(typeof credential === 'string' ? credential : undefined)
      if (credential !== testServiceCredential) {
        const error = { code: 'UNAUTHORIZED', message: 'Invalid service credential', requestId: 'stand-in' }
        response
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ success: false, error }))
        return
      }
      const { ids } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { ids: string[] }
      lookups.push(ids)
      // as inventory answers: the products found, in the order asked, unknown ids left out
      const products = ids.flatMap((id) => byId.get(id) ?? [])
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ products }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  const name = uniqueName('inventory')
  const id = `${name}-${randomUUID()}`
  const { baseUrl, headers } = consulApi()
  // no checks: an instance without checks is passing for as long as it is registered
  const registered = await fetch(`${baseUrl}/v1/agent/service/register`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ ID: id, Name: name, Address: '127.0.0.1', Port: port }),
  })
  if (!registered.ok) throw new Error(`Consul refused the stand-in: ${registered.status}`)

  let closing: Promise<void> | undefined
  const stopAnswering = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
    return closing
  }

  return {
    name,
    port,
    lookups,
    credentials,
    stopAnswering,
    async close() {
      await fetch(`${baseUrl}/v1/agent/service/deregister/${encodeURIComponent(id)}`, {
        method: 'PUT',
        headers,
      })
      await stopAnswering()
    },
  }
}
