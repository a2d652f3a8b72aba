// Registers a service of the fuzzing run in Consul under the run's own name (never the service's own, so that a
// developer's running `auth` and the run's never mix), for the run's gateway to find; removed again at the end.
import { type ConsulSettings, consulCall } from '../consul-http.ts'
import { errorText } from '../processes.ts'

export type { ConsulSettings }

export interface Registration {
  consulName: string
  deregister(): Promise<void>
}

async function consulPut(consul: ConsulSettings, path: string, body?: unknown): Promise<void> {
  await consulCall(consul, 'PUT', path, body === undefined ? {} : { body })
}

/**
 * What the service's own registration would say (address, port, an HTTP check of /health/ready), passing from the
 * start: the instance is already ready, and the gateway's first discovery must see it.
 */
export async function registerInConsul(
  consul: ConsulSettings,
  options: { consulName: string; port: number },
): Promise<Registration> {
  const id = `${options.consulName}-127.0.0.1-${options.port}`
  await consulPut(consul, '/v1/agent/service/register', {
    ID: id,
    Name: options.consulName,
    Address: '127.0.0.1',
    Port: options.port,
    Tags: ['api-fuzz'],
    Meta: { version: 'api-fuzz', region: 'local', az: 'local-a', weight: '1' },
    Check: {
      Name: 'ready',
      HTTP: `http://127.0.0.1:${options.port}/health/ready`,
      Interval: '5s',
      Timeout: '2s',
      Status: 'passing',
      DeregisterCriticalServiceAfter: '1m',
    },
  })
  return {
    consulName: options.consulName,
    async deregister() {
      try {
        await consulPut(consul, `/v1/agent/service/deregister/${encodeURIComponent(id)}`)
      } catch (error) {
        // Consul removes it itself a minute after the instance stopped answering
        process.stderr.write(`[api-fuzz] could not deregister ${id}: ${errorText(error)}\n`)
      }
    },
  }
}
