// How busy the whole machine was over a window (every process: PostgreSQL, Kafka, the bench, other sessions' work).
import { cpus } from 'node:os'

export interface CpuTimes {
  /** ms all CPUs spent idle */
  idle: number
  /** ms of all CPUs in all states */
  total: number
}

/** Sums os.cpus()' times (user, nice, sys, idle, irq; ms since boot) over the CPUs. */
export function cpuTimesOf(list: Pick<ReturnType<typeof cpus>[number], 'times'>[] = cpus()): CpuTimes {
  let idle = 0
  let total = 0
  for (const { times } of list) {
    idle += times.idle
    total += times.user + times.nice + times.sys + times.idle + times.irq
  }
  return { idle, total }
}

/** Share of CPU time that was not idle between two readings: 0 to 1 (0 when no time passed). */
export function busyShare(before: CpuTimes, after: CpuTimes): number {
  const total = after.total - before.total
  if (total <= 0) return 0
  return Math.min(1, Math.max(0, 1 - (after.idle - before.idle) / total))
}
