// Knows every registered route so that a known path with the wrong method gets 405 (with Allow), not 404.
import type { RouteOptions } from 'fastify'
import FindMyWay, { type HTTPVersion } from 'find-my-way'

/** The methods Meridian's routes may use; the server answers any other with 501 (plugin.ts). */
export const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

export interface RouteIndex {
  add(route: RouteOptions): void
  /** methods served at this path; empty when the path is unknown */
  allowedMethods(path: string): string[]
}

export function createRouteIndex(): RouteIndex {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false, caseSensitive: true })
  return {
    add(route) {
      const routeMethods = Array.isArray(route.method) ? route.method : [route.method]
      for (const method of routeMethods) {
        if (!(methods as readonly string[]).includes(method)) continue
        try {
          router.on(method as (typeof methods)[number], route.url, () => {}, {
            parameters: (route.url.match(/[:*]/g) ?? []).length,
          })
        } catch {
          // the same method and path registered twice (e.g. by an alias) is already known
        }
      }
    },
    allowedMethods(path) {
      // as OpenAPI reads paths, the most specific one is the path's: `POST /notifications/read` beside
      // `GET /notifications/:id` makes /notifications/read a POST-only path, although GET would route there too
      const matches = methods.flatMap((method) => {
        const found = router.find(method, path)
        return found ? [{ method, parameters: (found.store as { parameters: number }).parameters }] : []
      })
      const fewest = Math.min(...matches.map((match) => match.parameters))
      return matches.filter((match) => match.parameters === fewest).map((match) => match.method)
    },
  }
}
