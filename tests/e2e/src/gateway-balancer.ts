// What a load balancer in front of the gateways does, for a campaign that places orders through several: each
// gateway's readiness asked every 200 ms, requests spread over the ready ones in turn, and a request whose connection
// was refused (nothing was sent) tried at the next one. A gateway that drains (SIGTERM) turns not-ready before it
// stops listening, so a rolling restart of the gateways fails no request.
import { failureKey } from './steady-orders.ts'

export interface GatewayBalancer {
  /** runs `request` at a ready gateway (by its index in the list), and at the next one if the connection is refused */
  call<T>(request: (gateway: number) => Promise<T>): Promise<T>
  close(): void
}

export function createGatewayBalancer(gatewayUrls: string[], probeEveryMs = 200): GatewayBalancer {
  const ready = gatewayUrls.map(() => true)
  let closed = false
  let next = 0
  const probe = async (index: number) => {
    try {
      const response = await fetch(`${gatewayUrls[index]}/health/ready`, {
        signal: AbortSignal.timeout(1000),
      })
      await response.arrayBuffer()
      ready[index] = response.status === 200
    } catch {
      ready[index] = false
    }
  }
  const timer = setInterval(() => {
    if (!closed) for (let i = 0; i < gatewayUrls.length; i++) void probe(i)
  }, probeEveryMs)
  timer.unref()

  const pick = (): number => {
    for (let i = 0; i < gatewayUrls.length; i++) {
      const index = (next + i) % gatewayUrls.length
      if (ready[index]) {
        next = index + 1
        return index
      }
    }
    // none ready: the next in turn (its answer, or refusal, is what the client is told)
    next += 1
    return (next - 1) % gatewayUrls.length
  }

  return {
    async call(request) {
      const first = pick()
      try {
        return await request(first)
      } catch (error) {
        if (failureKey(error) !== 'ECONNREFUSED' || gatewayUrls.length < 2) throw error
        ready[first] = false
        return request((first + 1) % gatewayUrls.length)
      }
    },
    close() {
      closed = true
      clearInterval(timer)
    },
  }
}
