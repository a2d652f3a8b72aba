// Where Chromium is, for the scripts and tests that drive a headless browser (the trace screenshot, the browser tests).
import { execFileSync } from 'node:child_process'
import { MissingPrerequisite } from '../missing-prerequisite.ts'

/** Debian's chromium (./scripts/prepare installs it), or the binary MERIDIAN_CHROMIUM names. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MERIDIAN_CHROMIUM) return env.MERIDIAN_CHROMIUM
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim()
  } catch {
    throw new MissingPrerequisite(
      "Debian's chromium (or a Chromium binary named by MERIDIAN_CHROMIUM)",
      'installs it with apt-get',
    )
  }
}
