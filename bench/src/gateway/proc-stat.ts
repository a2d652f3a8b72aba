// CPU time and memory of a process and its children, read from /proc: the same figures for Node and nginx alike.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

export interface ProcStat {
  pid: number
  /** parent pid (field 4) */
  ppid: number
  /** user + system CPU time of all the process's threads, in clock ticks (fields 14 and 15) */
  cpuTicks: number
}

/**
 * Parses one /proc/<pid>/stat line. The command (field 2) is in parentheses and may itself hold spaces or
 * parentheses, so the fields are counted from the last ')'.
 */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf('(')
  const close = line.lastIndexOf(')')
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: '${line.slice(0, 80)}'`)
  // after ')': field 3 (state) is index 0, so field n is index n - 3
  const fields = line
    .slice(close + 2)
    .trim()
    .split(/\s+/)
  const field = (n: number) => {
    const value = Number(fields[n - 3])
    if (!Number.isFinite(value)) throw new Error(`/proc/<pid>/stat: field ${n} is not a number`)
    return value
  }
  return { pid: Number(line.slice(0, open).trim()), ppid: field(4), cpuTicks: field(14) + field(15) }
}

/** VmRSS and VmHWM (peak RSS since the process started) of /proc/<pid>/status, in bytes. */
export function parseProcStatus(text: string): { rss: number; peakRss: number } {
  const kb = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text)
    return match ? Number(match[1]) * 1024 : 0
  }
  return { rss: kb('VmRSS'), peakRss: kb('VmHWM') }
}

/** Clock ticks per second (getconf CLK_TCK; 100 on Linux almost everywhere). */
export function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return Number.isInteger(value) && value > 0 ? value : 100
  } catch {
    return 100
  }
}

/** The pid and its direct children (nginx's workers under its master); a pid gone meanwhile is skipped. */
export function processTree(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8')).ppid === pid)
        children.push(Number(entry))
    } catch {
      // exited between the listing and the read
    }
  }
  return [pid, ...children]
}

export interface UsageSnapshot {
  /** CPU time of the processes, ms */
  cpuMs: number
  /** summed RSS, bytes */
  rss: number
  /** summed peak RSS (each process's own high-water mark), bytes */
  peakRss: number
}

/** CPU time and memory of these processes together, now. */
export function usageOf(pids: number[], ticksPerSecond: number): UsageSnapshot {
  let ticks = 0
  let rss = 0
  let peakRss = 0
  for (const pid of pids) {
    try {
      ticks += parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuTicks
      const memory = parseProcStatus(readFileSync(`/proc/${pid}/status`, 'utf8'))
      rss += memory.rss
      peakRss += memory.peakRss
    } catch {
      // a worker that exited: its time is lost, the others still count
    }
  }
  return { cpuMs: (ticks * 1000) / ticksPerSecond, rss, peakRss }
}
