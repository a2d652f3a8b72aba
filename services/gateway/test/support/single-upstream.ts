// One test upstream process behind a gateway of its own, routed at /api/v1/<segment>: the setup of the edge tests
// that watch what a single instance goes through (ejection, circuit, relayed answers).
import type { UpstreamStatus } from '../../src/upstreams/upstream-services.ts'
import { eventually, startGateway, type TestGateway } from './gateway.ts'
import { startUpstream, type UpstreamProcess } from './upstream-process.ts'

export interface SingleUpstream {
  gateway: TestGateway
  upstream: UpstreamProcess
  /** the Consul name the gateway routes the prefix to */
  service: string
  /** the instance list's status as the gateway sees it (instances, ejected, circuit) */
  status(): UpstreamStatus | undefined
  close(): Promise<void>
}

/** Starts the upstream, then the gateway (with the spec's thresholds), and waits until the gateway sees it. */
export async function startSingleUpstream(service: string, segment: string): Promise<SingleUpstream> {
  const upstream = await startUpstream({ name: service, label: 'only', segment })
  const gateway = await startGateway({ routes: [{ prefix: `/api/v1/${segment}`, service }] })
  const status = () => gateway.app.upstreams.get(service)?.status()
  await eventually(() => status()?.instances === 1)
  return {
    gateway,
    upstream,
    service,
    status,
    async close() {
      await gateway.close()
      await upstream.stop()
      await upstream.deregister()
    },
  }
}
