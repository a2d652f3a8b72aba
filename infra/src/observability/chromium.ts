// Where Chromium is, for the scripts and tests that drive a headless browser (the trace screenshot, the browser tests).
import { execFileSync } from 'node:child_process'

/** Debian's chromium (or MERIDIAN_CHROMIUM): scripts/test installs it. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MERIDIAN_CHROMIUM) return env.MERIDIAN_CHROMIUM
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim()
  } catch {
    throw new Error(
      "Chromium is missing: run ./scripts/test (it installs Debian's chromium) or set MERIDIAN_CHROMIUM",
    )
  }
}
