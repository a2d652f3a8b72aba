// The catalogue as order reads it: inventory's POST /internal/products/lookup, reached through Consul (a healthy
// instance per call, round robin, with the service credential) with the kit's discovered upstream client (5 s deadline; unreachable or no healthy instance
// is 503 SERVICE_UNAVAILABLE, an inventory error status 502 BAD_GATEWAY).
//
// Why a synchronous call rather than a local projection of the catalogue: inventory is the authority on names,
// prices and whether a product is active, and an order must be priced from what is current; a projection would need
// product events (product.created / product.changed) that do not exist yet.
import { AppError, ErrorCode, type ProductLookup, type ProductSummary } from '@meridian/contracts'
import {
  type ConsulClientOptions,
  createDiscoveredUpstream,
  type RegistryLogger,
  type ServiceClient,
} from '@meridian/service-kit'

/** What placing an order needs of the catalogue. */
export interface ProductCatalogue {
  /** The products among `ids` (unknown ids are absent). Rejects with an AppError (503, 502) when it cannot tell. */
  lookup(ids: readonly string[], requestId?: string): Promise<ProductSummary[]>
}

export interface InventoryCatalogueOptions {
  consul: ConsulClientOptions
  /** inventory's name in Consul */
  serviceName: string
  logger: RegistryLogger
  /** how long a call waits for Consul's first list of instances, ms */
  discoveryWaitMs: number
  /** SERVICE_CREDENTIAL: the lookup is one of inventory's /internal/ routes */
  serviceCredential: string
}

export interface InventoryCatalogue extends ProductCatalogue {
  /** for runService's clients: the upstream client's connections, then the discovery's blocking query */
  clients: ServiceClient[]
}

export function createInventoryCatalogue(options: InventoryCatalogueOptions): InventoryCatalogue {
  const { upstream, clients } = createDiscoveredUpstream({
    consul: options.consul,
    name: 'inventory',
    serviceName: options.serviceName,
    logger: options.logger,
    discoveryWaitMs: options.discoveryWaitMs,
    errorCode: ErrorCode.BAD_GATEWAY,
    serviceCredential: options.serviceCredential,
  })

  return {
    async lookup(ids, requestId) {
      const { body } = await upstream.request<ProductLookup>({
        method: 'POST',
        path: '/internal/products/lookup',
        body: { ids },
        ...(requestId ? { requestId } : {}),
      })
      if (!body || !Array.isArray(body.products)) {
        throw new AppError(502, ErrorCode.BAD_GATEWAY, { message: 'inventory answered without products' })
      }
      return body.products
    },
    clients,
  }
}
