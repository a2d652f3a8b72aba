// The running system's HTTP contract against the newest release's (releases/<version>/openapi.json): a client written
// against the release keeps working with this code. A breaking change fails here, naming each operation and what
// changed, unless it lives under a new version of its path (/api/v2) beside the old one (docs/how-to/releasing.md).
// The check itself, and its failing on deliberate breaks: infra/test/openapi-compat.test.ts.
import { fileURLToPath } from 'node:url'
import {
  breakingChanges,
  describeChanges,
  latestReleasedOpenApi,
  type OpenApiDocument,
} from '@meridian/infra/openapi-compat'
import { describe, expect, inject, it } from 'vitest'
import '../src/system-context.ts'

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
const { gatewayUrl } = inject('system')

/**
 * GraphiQL, mercurius' query page, which content serves only with NODE_ENV=development (./scripts/dev, where a release
 * takes its document): a tool of the development form, not a part of the interface, and absent from this system.
 */
const developmentTools = (path: string) => path === '/graphiql' || path.startsWith('/graphiql/')

describe("the HTTP contract against the newest release's", () => {
  it("when the gateway's merged document is compared with the release's, then nothing a client of the release uses has broken", async () => {
    const release = latestReleasedOpenApi(repoRoot)
    if (!release) throw new Error('no release under releases/ to compare with')
    const response = await fetch(`${gatewayUrl}/docs/json`)
    expect(response.status).toBe(200)
    const current = (await response.json()) as OpenApiDocument
    expect(Object.keys(current.paths ?? {}).length).toBeGreaterThan(50)

    expect(
      describeChanges(breakingChanges(release.document, current, { ignorePaths: developmentTools })),
      `against ${release.version}`,
    ).toBe('')
  })
})
