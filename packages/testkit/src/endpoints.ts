// Where the real infrastructure is: the endpoints the global setup found, read by every engine's helpers.
import type { Endpoints } from '@meridian/infra'
import { inject } from 'vitest'
import './provided-context.ts'

export type { Endpoints } from '@meridian/infra'

/** Endpoints provided by the global setup (`@meridian/testkit/global-setup`). */
export function infraEndpoints(): Endpoints {
  const provided = inject('infra')
  if (!provided) {
    throw new Error(
      "no infrastructure endpoints: add globalSetup: ['@meridian/testkit/global-setup'] to this workspace's vitest config",
    )
  }
  return provided
}
