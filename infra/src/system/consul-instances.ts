// A run's instances in Consul: the services register (and deregister) themselves under the run's names; what a
// SIGKILL left behind is removed here, by those names only, when the run ends.
import { type ConsulSettings, consulCall } from '../consul-http.ts'

export type { ConsulSettings }

/** The ids of the local agent's instances registered under this name (whatever their health). */
export async function instanceIds(consul: ConsulSettings, consulName: string): Promise<string[]> {
  const filter = encodeURIComponent(`Service == ${JSON.stringify(consulName)}`)
  const services = JSON.parse(
    await consulCall(consul, 'GET', `/v1/agent/services?filter=${filter}`),
  ) as Record<string, unknown>
  return Object.keys(services)
}

export async function deregisterInstance(consul: ConsulSettings, id: string): Promise<void> {
  await consulCall(consul, 'PUT', `/v1/agent/service/deregister/${encodeURIComponent(id)}`)
}

/** Whether the instance at `address:port` is among the passing instances of `consulName` (as its agent sees them). */
export async function isPassing(
  consul: ConsulSettings,
  consulName: string,
  address: string,
  port: number,
): Promise<boolean> {
  const entries = JSON.parse(
    await consulCall(consul, 'GET', `/v1/health/service/${encodeURIComponent(consulName)}?passing=true`),
  ) as { Service: { Address: string; Port: number } }[]
  return entries.some((entry) => entry.Service.Address === address && entry.Service.Port === port)
}
