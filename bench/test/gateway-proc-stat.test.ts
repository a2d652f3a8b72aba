import { describe, expect, it } from 'vitest'
import { loadGatewayBenchConfig } from '../src/gateway/gateway-config.ts'
import { parseProcStat, parseProcStatus } from '../src/gateway/proc-stat.ts'

// fields after the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
const statLine = (command: string) =>
  `4242 (${command}) S 4100 4242 4100 0 -1 4194560 1200 0 3 0 1234 567 8 9 20 0 11 0 98765 1234567890 45678 ` +
  '18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0'

describe('/proc/<pid>/stat', () => {
  it('when a stat line is read, then pid, ppid and utime + stime come out', () => {
    expect(parseProcStat(statLine('node'))).toEqual({ pid: 4242, ppid: 4100, cpuTicks: 1234 + 567 })
  })

  it('when the command holds spaces and parentheses, then the fields are still counted from the last one', () => {
    expect(parseProcStat(statLine('nginx: worker (x) 1'))).toEqual({ pid: 4242, ppid: 4100, cpuTicks: 1801 })
  })

  it('when the line is not a stat line, then it is refused', () => {
    expect(() => parseProcStat('garbage')).toThrow(/not a \/proc/)
  })
})

describe('/proc/<pid>/status', () => {
  it('when VmRSS and VmHWM are present, then they are read in bytes', () => {
    const status = 'Name:\tnginx\nVmHWM:\t   12000 kB\nVmRSS:\t   11000 kB\nThreads:\t1\n'
    expect(parseProcStatus(status)).toEqual({ rss: 11000 * 1024, peakRss: 12000 * 1024 })
  })

  it('when they are missing (a zombie), then both are 0', () => {
    expect(parseProcStatus('Name:\tx\nState:\tZ (zombie)\n')).toEqual({ rss: 0, peakRss: 0 })
  })
})

describe('knobs', () => {
  it('when nothing is set, then the defaults are 3 s, 10 s, 10 connections and one nginx worker', () => {
    const config = loadGatewayBenchConfig({})
    expect(config).toMatchObject({ warmupSeconds: 3, measureSeconds: 10, connections: 10, nginxWorkers: 1 })
  })

  it('when the knobs are set, then they are used, and a bad value is refused by name', () => {
    const config = loadGatewayBenchConfig({
      BENCH_GATEWAY_WARMUP_SECONDS: '2',
      BENCH_GATEWAY_SECONDS: '4',
      BENCH_GATEWAY_CONNECTIONS: '20',
      BENCH_GATEWAY_NGINX_WORKERS: 'auto',
    })
    expect(config).toMatchObject({
      warmupSeconds: 2,
      measureSeconds: 4,
      connections: 20,
      nginxWorkers: 'auto',
    })
    expect(() => loadGatewayBenchConfig({ BENCH_GATEWAY_SECONDS: 'ten' })).toThrow(/BENCH_GATEWAY_SECONDS/)
  })
})
