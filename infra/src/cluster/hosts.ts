// Hosts on one machine: Linux network namespaces on a bridge, each with one address in 198.18.0.0/15 (the range
// reserved for benchmarking), for running Meridian and its engines as a cluster and breaking the network between them.
// Needs root (ip netns, veth, a bridge, iptables inside a namespace). Everything made here carries the cluster's
// prefix; destroyHosts(prefix) removes it, whatever a run that was interrupted left behind.
import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { which } from '../native/engine.ts'
import { type DaemonOptions, isAlive, run } from '../processes.ts'

export interface HostsOptions {
  /** the cluster's prefix: namespaces `<prefix>-h1`…, the bridge `<prefix>-br`; lower-case letters and digits */
  prefix: string
  /** how many hosts; default 3 */
  count?: number
  /** the /24 the hosts live in, as its first three octets; default 198.18.0 (the bridge is .1, host n is .10+n) */
  subnet?: string
}

/** A process started in a host: as processes.ts starts one, `uid`/`gid` through setpriv inside the namespace. */
export type DaemonInHost = DaemonOptions

export interface ClusterHost {
  /** `h1`, `h2`, … */
  name: string
  /** the network namespace */
  netns: string
  address: string
  /** starts a process inside the host that outlives this one; its pid is the process' own */
  startDaemon(options: DaemonInHost): number
  /** runs a command inside the host to completion */
  run(
    command: string,
    args: string[],
    options?: { timeoutMs?: number; env?: NodeJS.ProcessEnv },
  ): Promise<string>
  /** every process in the host now */
  pids(): Promise<number[]>
  /** every process in the host, SIGKILLed (a host losing power); resolves once all are gone */
  killAll(): Promise<void>
  /** drops every packet between this host and the other hosts (not the machine's own address) */
  partition(): Promise<void>
  /** undoes partition() */
  heal(): Promise<void>
}

export interface Hosts {
  prefix: string
  /** the machine's own address on the bridge (where a client outside every host comes from) */
  bridgeAddress: string
  hosts: ClusterHost[]
  /** kills every process of every host and removes the namespaces and the bridge */
  destroy(): Promise<void>
}

const netnsOf = (prefix: string, n: number) => `${prefix}-h${n}`
const bridgeOf = (prefix: string) => `${prefix}-br`
/** the partition rules' chain inside a host: flushed by heal() */
const partitionChain = 'MERIDIAN-PARTITION'

function checkPrefix(prefix: string): void {
  // interface names are at most 15 characters: `<prefix>-br`, `<prefix>-v9`
  if (!/^[a-z][a-z0-9]{0,9}$/.test(prefix))
    throw new Error(
      `a cluster prefix is 1–10 lower-case letters and digits, starting with a letter (got '${prefix}')`,
    )
}

async function ip(...args: string[]): Promise<string> {
  return run('ip', args, { timeoutMs: 10_000 })
}

async function namespacePids(netns: string): Promise<number[]> {
  try {
    const out = await ip('netns', 'pids', netns)
    return out
      .split(/\s+/)
      .filter((each) => /^\d+$/.test(each))
      .map(Number)
  } catch {
    return []
  }
}

async function killNamespace(netns: string): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const pids = (await namespacePids(netns)).filter((pid) => pid !== process.pid)
    if (pids.length === 0) return
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    await sleep(100)
  }
  throw new Error(
    `${netns}: processes still running after SIGKILL: ${(await namespacePids(netns)).join(' ')}`,
  )
}

/**
 * `ip netns exec <name>` mounts the files of /etc/netns/<name>/ over /etc/'s: each host gets a hosts file naming the
 * cluster's addresses (the hosts h1, h2, … and the machine on the bridge) and a resolver with no server but its own
 * loopback. A name or address asked of a host is answered there and then: Kafka's SASL looks up the name of every
 * client's address, and with the machine's resolver each lookup went to a DNS server outside the cluster and waited
 * for it (10 s per connection), which is traffic the cluster must never send.
 */
const namespaceEtc = '/etc/netns'

function writeNamespaceResolver(
  netns: string,
  prefix: string,
  bridgeAddress: string,
  addresses: string[],
): void {
  const dir = join(namespaceEtc, netns)
  mkdirSync(dir, { recursive: true })
  const names = addresses.map((address, i) => `${address}\th${i + 1}`)
  writeFileSync(
    join(dir, 'hosts'),
    `# written by infra/src/cluster/hosts.ts for the cluster ${prefix}; removed with it\n127.0.0.1\tlocalhost\n::1\tlocalhost\n${bridgeAddress}\t${prefix}-machine\n${names.join('\n')}\n`,
  )
  writeFileSync(
    join(dir, 'resolv.conf'),
    '# written by infra/src/cluster/hosts.ts: no DNS server beyond the host itself\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n',
  )
}

/** The folders of /etc/netns a cluster with this prefix made. */
function namespaceEtcFolders(prefix: string): string[] {
  if (!existsSync(namespaceEtc)) return []
  return readdirSync(namespaceEtc).filter((name) => new RegExp(`^${prefix}-h\\d+$`).test(name))
}

/** The namespaces of a cluster with this prefix that exist now (a run's, or one an interrupted run left). */
export async function existingNamespaces(prefix: string): Promise<string[]> {
  const out = await ip('netns', 'list')
  return out
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => new RegExp(`^${prefix}-h\\d+$`).test(name))
}

/** Removes every namespace and the bridge of the cluster `prefix`, killing what runs in them. */
export async function destroyHosts(prefix: string): Promise<void> {
  checkPrefix(prefix)
  for (const netns of await existingNamespaces(prefix)) {
    await killNamespace(netns)
    await ip('netns', 'del', netns).catch(() => {})
  }
  for (const netns of namespaceEtcFolders(prefix))
    rmSync(join(namespaceEtc, netns), { recursive: true, force: true })
  // A namespace outlives its name while the kernel still holds it (its sockets closing): its veth pair then stays,
  // and the next createHosts could not make `<prefix>-v<n>` again. Deleting our end removes the pair.
  const links = await ip('-o', 'link', 'show')
  for (const [, veth] of links.matchAll(new RegExp(`^\\d+: (${prefix}-v\\d+)@`, 'gm')))
    await ip('link', 'del', veth as string).catch(() => {})
  await ip('link', 'del', bridgeOf(prefix)).catch(() => {})
}

function hostOf(prefix: string, n: number, address: string, others: () => string[]): ClusterHost {
  const netns = netnsOf(prefix, n)
  const inHost = (command: string, args: string[], account?: { uid?: number; gid?: number }) => {
    const asAccount =
      account?.uid !== undefined
        ? ['setpriv', `--reuid=${account.uid}`, `--regid=${account.gid ?? account.uid}`, '--clear-groups']
        : []
    return ['netns', 'exec', netns, ...asAccount, command, ...args]
  }
  const iptables = (...args: string[]) =>
    run('ip', inHost('iptables', ['-w', ...args]), { timeoutMs: 10_000 })
  return {
    name: `h${n}`,
    netns,
    address,
    startDaemon(options) {
      const log = openSync(options.logFile, 'a')
      try {
        // `ip netns exec` enters the namespace and execs the command: the pid is the command's own
        const child = spawn('ip', inHost(options.command, options.args, options), {
          cwd: options.cwd,
          env: options.env ?? process.env,
          detached: true,
          stdio: ['ignore', log, log],
        })
        if (child.pid === undefined) throw new Error(`${netns}: could not start ${options.command}`)
        child.unref()
        return child.pid
      } finally {
        closeSync(log)
      }
    },
    run: (command, args, options = {}) =>
      run('ip', inHost(command, args), {
        timeoutMs: options.timeoutMs ?? 60_000,
        ...(options.env ? { env: options.env } : {}),
      }),
    pids: () => namespacePids(netns),
    killAll: () => killNamespace(netns),
    async partition() {
      await iptables('-N', partitionChain).catch(() => {})
      await iptables('-F', partitionChain)
      for (const other of others()) {
        await iptables('-A', partitionChain, '-s', other, '-j', 'DROP')
        await iptables('-A', partitionChain, '-d', other, '-j', 'DROP')
      }
      for (const chain of ['INPUT', 'OUTPUT']) {
        await iptables('-C', chain, '-j', partitionChain).catch(() =>
          iptables('-I', chain, '-j', partitionChain),
        )
      }
    },
    async heal() {
      await iptables('-F', partitionChain).catch(() => {})
    },
  }
}

/**
 * Makes `count` hosts: a bridge on the machine with the subnet's .1, and one namespace per host with a veth on the
 * bridge at .11, .12, …, and its own loopback. A cluster with the same prefix that is still there is removed first.
 */
export async function createHosts(options: HostsOptions): Promise<Hosts> {
  const { prefix } = options
  checkPrefix(prefix)
  const count = options.count ?? 3
  const subnet = options.subnet ?? '198.18.0'
  if (!/^198\.(18|19)\.\d{1,3}$/.test(subnet))
    throw new Error(`hosts live in 198.18.0.0/15, the range reserved for benchmarking (got ${subnet})`)
  if (process.getuid?.() !== 0)
    throw new Error('hosts in network namespaces need root (ip netns, veth, bridge)')
  // the cluster's links are iptables rules in each host: without it the hosts would come up and the links fail later
  if (!which('ip')) throw new MissingPrerequisite("Debian's iproute2 (ip)", 'installs it with apt-get')
  if (!which('iptables')) throw new MissingPrerequisite("Debian's iptables", 'installs it with apt-get')
  await destroyHosts(prefix)
  const bridge = bridgeOf(prefix)
  const bridgeAddress = `${subnet}.1`
  const addresses = Array.from({ length: count }, (_, i) => `${subnet}.${11 + i}`)
  const hosts: ClusterHost[] = []
  try {
    await ip('link', 'add', bridge, 'type', 'bridge')
    await ip('addr', 'add', `${bridgeAddress}/24`, 'dev', bridge)
    await ip('link', 'set', bridge, 'up')
    for (let n = 1; n <= count; n++) {
      const netns = netnsOf(prefix, n)
      const address = addresses[n - 1] as string
      const veth = `${prefix}-v${n}`
      await ip('netns', 'add', netns)
      await ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns)
      await ip('link', 'set', veth, 'master', bridge, 'up')
      await ip('-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0')
      await ip('-n', netns, 'link', 'set', 'eth0', 'up')
      await ip('-n', netns, 'link', 'set', 'lo', 'up')
      await ip('-n', netns, 'route', 'add', 'default', 'via', bridgeAddress)
      writeNamespaceResolver(netns, prefix, bridgeAddress, addresses)
      hosts.push(hostOf(prefix, n, address, () => addresses.filter((other) => other !== address)))
    }
  } catch (error) {
    await destroyHosts(prefix)
    throw error
  }
  let destroying: Promise<void> | undefined
  return {
    prefix,
    bridgeAddress,
    hosts,
    destroy: () => {
      destroying ??= destroyHosts(prefix)
      return destroying
    },
  }
}

/** Whether every one of `pids` has ended. */
export const allGone = (pids: number[]): boolean => pids.every((pid) => !isAlive(pid))
