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

/** Whether Consul lists a passing instance of `name` (false when Consul does not answer in 2 s). */
export async function passingInConsul(name: string): Promise<boolean> {
  const { baseUrl, headers } = consulApi()
  try {
    const response = await fetch(`${baseUrl}/v1/health/service/${encodeURIComponent(name)}?passing=true`, {
      headers,
      signal: AbortSignal.timeout(2000),
    })
    return response.status === 200 && ((await response.json()) as unknown[]).length > 0
  } catch {
    return false
  }
}
