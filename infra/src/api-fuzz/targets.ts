// What each schemathesis run of the API fuzzing fuzzes. A service's document, whole, on its own port. The gateway's
// merged document in two runs, each with an administrator of its own: the gateway's own operations (admin, audit, dead
// letters, its OpenAPI and AsyncAPI documents) with every phase and the full budget, like a service's; and the
// operations it routes to the services in the coverage phase only. Those operations are fuzzed in every phase on the
// services themselves, which answer the same requests the same way through the gateway; what only the gateway's run
// can find is how its edge and proxy treat them (a path segment longer than the routers take, a body the service
// refuses while it is still being uploaded, headers over a limit), and the coverage phase sends every operation the
// boundary and invalid values of each of its parameters and bodies, deterministically.
export interface FuzzTarget {
  /** the run's name: its report, log and examples database are named by it */
  name: string
  /** the service whose process answers (its log is named when the run fails) */
  service: string
  baseUrl: string
  /** schemathesis' options that narrow the run: which operations, which phases */
  narrowing: string[]
}

/** A regular expression that matches exactly these path templates (`/api/v1/users/{id}` as written). */
export function exactPaths(paths: readonly string[]): string {
  const escaped = [...paths].sort().map((path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return `^(?:${escaped.join('|')})$`
}

/**
 * The targets of one run: each service's document, and the gateway's in two parts when it routes to any of them
 * (`routedPaths`: the paths of the services' own documents). The gateway's come first: they are the longest runs.
 */
export function fuzzTargets(options: {
  services: readonly { name: string; baseUrl: string; isGateway: boolean }[]
  routedPaths: readonly string[]
}): FuzzTarget[] {
  const { routedPaths } = options
  const targets: FuzzTarget[] = []
  for (const service of options.services) {
    const whole = { name: service.name, service: service.name, baseUrl: service.baseUrl, narrowing: [] }
    if (!service.isGateway || routedPaths.length === 0) {
      targets.push(whole)
      continue
    }
    const routed = exactPaths(routedPaths)
    targets.unshift(
      { ...whole, narrowing: ['--exclude-path-regex', routed] },
      {
        ...whole,
        name: `${service.name}-routes`,
        narrowing: ['--include-path-regex', routed, '--phases', 'coverage'],
      },
    )
  }
  return targets
}
