// A TCP port free on 127.0.0.1 now, for a process that cannot take 0 (the system's services, benchmarks, the API
// fuzzing run). Not one the kernel picks (listen on 0): those come from its ephemeral range (32768-60999 on Linux),
// from which every outgoing connection of every process also takes its local port, so one could take it between this
// check and the service's listen (a system start failed with EADDRINUSE on 37813 while three suites ran side by
// side). Below that range only an explicit bind can take it: a random port there, checked by binding it.
import { createServer } from 'node:net'

/** The range handed out: above the engines' and services' fixed ports, below the kernel's ephemeral range. */
export const freePortRange = { low: 20_000, high: 32_767 } as const

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * The ports this process handed out: never handed out twice, so that ports asked for together (an engine's several,
 * chosen at once and bound only when it starts) are distinct even when the same random one comes up.
 */
const handedOut = new Set<number>()

export async function freePort(): Promise<number> {
  const { low, high } = freePortRange
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1))
    if (handedOut.has(port)) continue
    // taken before the check: a concurrent call's check cannot pick it meanwhile
    handedOut.add(port)
    if (await canBind(port)) return port
  }
  throw new Error(`no free TCP port on 127.0.0.1 between ${low} and ${high} after 100 tries`)
}
