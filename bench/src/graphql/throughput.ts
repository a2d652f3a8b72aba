// bench:graphql part A: `POST /graphql` with the list query through the content service and through bare mercurius,
// as the users bench measures its list: the same answer first, then a warm-up on each, then halves ordered chassis,
// bare, bare, chassis, with every response's latency, and each server's CPU time and peak RSS over IPC.
import { isDeepStrictEqual } from 'node:util'
import type { ServerName } from '../ipc.ts'
import { type LoadSample, measureLoad, summarise } from '../load.ts'
import { toMb } from '../report.ts'
import type { ServerProcess } from '../server-process.ts'
import type { ThroughputResult } from './figures.ts'

export const listQuery = '{ posts(limit: 20) { title author { name } } }'

export interface AnswerCheck {
  /** both 200, no errors, deep-equal bodies */
  identical: boolean
  problems: string[]
}

const listRequest = (authorization: string) => ({
  method: 'POST' as const,
  headers: { 'content-type': 'application/json', authorization },
  body: JSON.stringify({ query: listQuery }),
})

/** Do both servers answer the list query alike? A benchmark of unequal work would compare nothing. */
export async function checkSameAnswer(
  servers: Record<ServerName, ServerProcess<string>>,
  authorization: string,
): Promise<AnswerCheck> {
  const ask = async (server: ServerProcess<string>) => {
    const response = await fetch(`${server.baseUrl}/graphql`, listRequest(authorization))
    return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: unknown } }
  }
  const [chassis, bare] = await Promise.all([ask(servers.chassis), ask(servers.bare)])
  const problems: string[] = []
  for (const [name, answer] of [
    ['chassis', chassis],
    ['bare', bare],
  ] as const) {
    if (answer.status !== 200 || answer.body.errors !== undefined)
      problems.push(`${name}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
  }
  const identical = problems.length === 0 && isDeepStrictEqual(chassis.body, bare.body)
  if (problems.length === 0 && !identical) problems.push('the two bodies differ')
  return { identical, problems }
}

export interface ThroughputSettings {
  warmupSeconds: number
  measureSeconds: number
  connections: number
}

export async function measureThroughput(
  servers: Record<ServerName, ServerProcess<string>>,
  authorization: string,
  settings: ThroughputSettings,
): Promise<ThroughputResult[]> {
  const run = (name: ServerName, seconds: number) =>
    measureLoad({
      url: `${servers[name].baseUrl}/graphql`,
      ...listRequest(authorization),
      connections: settings.connections,
      duration: seconds,
    })
  for (const name of ['chassis', 'bare'] as const) await run(name, settings.warmupSeconds)
  const before = {
    chassis: await servers.chassis.markPeak(),
    bare: await servers.bare.markPeak(),
  }
  // a machine that speeds up or slows down during the run weighs on both servers alike
  const parts: Record<ServerName, LoadSample[]> = { chassis: [], bare: [] }
  for (const name of ['chassis', 'bare', 'bare', 'chassis'] as const) {
    parts[name].push(await run(name, settings.measureSeconds / 2))
  }
  const results: ThroughputResult[] = []
  for (const name of ['chassis', 'bare'] as const) {
    const after = await servers[name].snapshot()
    const figures = summarise(parts[name])
    results.push({
      server: name,
      ...figures,
      rssMb: toMb(after.rss),
      peakRssMb: toMb(after.peakRss),
      cpuMsPerRequest:
        figures.totalRequests > 0
          ? (after.cpuMicros - before[name].cpuMicros) / 1000 / figures.totalRequests
          : 0,
    })
  }
  return results
}
