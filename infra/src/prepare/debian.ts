// The Debian packages a run needs, installed in one apt-get call (apt takes one install at a time) without letting
// their maintainer scripts start system-wide services (redis-server would take 6379 from the native Redis).
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { which } from '../native/engine.ts'
import { runLogged } from '../processes.ts'
import type { DebianPackage, ObtainContext, PrerequisiteStep, Purpose } from './prerequisite.ts'

/** The packages among `packages` whose provision is missing here. */
export const missingPackages = (packages: readonly DebianPackage[]): DebianPackage[] =>
  packages.filter((entry) => !entry.installed())

/** apt-get is there to use: root, or a password-less sudo. */
async function aptCommand(): Promise<string[]> {
  if (!which('apt-get')) throw new Error('apt-get is not on this machine')
  if (process.getuid?.() === 0) return ['apt-get']
  if (!which('sudo')) throw new Error('installing Debian packages needs root or sudo')
  return ['sudo', '-n', 'apt-get']
}

async function aptInstall(names: string[], context: ObtainContext): Promise<void> {
  const [command, ...prefix] = await aptCommand()
  const policy = '/usr/sbin/policy-rc.d'
  const ownPolicy = process.getuid?.() === 0 && !existsSync(policy)
  if (ownPolicy)
    writeFileSync(
      policy,
      '#!/bin/sh\n# ./scripts/prepare: no service starts during this install\nexit 101\n',
      {
        mode: 0o755,
      },
    )
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    await runLogged(command!, [...prefix, 'update', '-q'], { env, logFile: context.logFile })
    await runLogged(command!, [...prefix, 'install', '-y', '-q', '--no-install-recommends', ...names], {
      env,
      logFile: context.logFile,
    })
  } finally {
    if (ownPolicy) rmSync(policy, { force: true })
  }
}

/** One step for every Debian package the purposes need: present when each one's provision is there. */
export function debianStep(packages: readonly DebianPackage[], chosen: readonly Purpose[]): PrerequisiteStep {
  const needed = packages.filter((entry) => entry.purposes.some((purpose) => chosen.includes(purpose)))
  const names = [...new Set(needed.map((entry) => entry.package))]
  return {
    name: 'debian',
    title: 'Debian packages',
    purposes: chosen,
    async present() {
      return missingPackages(needed).length === 0 ? names.join(' ') || 'none needed' : undefined
    },
    describeMissing: () =>
      `missing ${missingPackages(needed)
        .map((entry) => `${entry.package} (${entry.why})`)
        .join(', ')}`,
    async obtain(context) {
      const missing = [...new Set(missingPackages(needed).map((entry) => entry.package))]
      context.say(`installing ${missing.join(' ')} with apt-get`)
      await aptInstall(missing, context)
      const still = missingPackages(needed)
      if (still.length > 0)
        throw new Error(`installed, but still missing: ${still.map((entry) => entry.package).join(', ')}`)
      return missing.join(' ')
    },
  }
}
