// The content service's environment.
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const ContentEnv = serviceEnv(ownStoresEnv({ port: 3008, database: 'content' }))
export type ContentConfig = Static<typeof ContentEnv>

export const loadContentConfig = (env: NodeJS.ProcessEnv = process.env): ContentConfig =>
  loadConfig(ContentEnv, env)
