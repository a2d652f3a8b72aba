// Where the auth service's numbered SQL migrations live.
import { fileURLToPath } from 'node:url'

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))
