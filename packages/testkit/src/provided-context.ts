// What the global setup provides to every test file: inject('infra') is typed wherever the testkit is imported.
import type { Endpoints } from '@meridian/infra'

declare module 'vitest' {
  export interface ProvidedContext {
    infra: Endpoints
  }
}
