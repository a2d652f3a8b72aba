// Consul for tests: the agent's HTTP API, for registering, checking and removing the services a test starts.
import { consulBaseUrl } from '@meridian/infra'
import { infraEndpoints } from './endpoints.ts'

/** Consul's HTTP API base URL, with the ACL token header when one is configured. */
export function consulApi(): { baseUrl: string; headers: Record<string, string> } {
  const { consulHttpAddr, consulToken } = infraEndpoints()
  return {
    baseUrl: consulBaseUrl(consulHttpAddr),
    headers: consulToken ? { 'X-Consul-Token': consulToken } : {},
  }
}
