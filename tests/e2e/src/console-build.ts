// The console as the gateway serves it: built once per run (Vite, apps/console) into its dist folder.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const consoleDir = fileURLToPath(new URL('../../../apps/console', import.meta.url))
export const consoleDist = `${consoleDir}/dist`

/** `vite build` of apps/console, with this Node; fails the setup with Vite's output when it fails. */
export function buildConsole(): void {
  execFileSync(
    process.execPath,
    [`${consoleDir}/node_modules/vite/bin/vite.js`, 'build', '--logLevel', 'warn'],
    {
      cwd: consoleDir,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  )
}
