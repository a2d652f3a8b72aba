// Messages between the bench (parent) and a server process (child) over the fork IPC channel.

export type ServerName = 'chassis' | 'bare'

export interface ProcessSnapshot {
  /** resident set size now, bytes */
  rss: number
  /** highest RSS sampled (every 100 ms) since the last `mark` */
  peakRss: number
  heapUsed: number
  /** memory of C++ objects bound to JavaScript ones (Buffers, ArrayBuffers, zlib's), bytes */
  external: number
  /** CPU time of the whole process (event loop, libuv pool, GC threads) since it started, microseconds */
  cpuMicros: number
}

export type ParentMessage =
  /** restart peak tracking: the measured runs begin */
  | { type: 'mark'; id: number }
  | { type: 'snapshot'; id: number }
  /** a snapshot after a full garbage collection (when the process runs with --expose-gc): memory that is held */
  | { type: 'settled'; id: number }
  | { type: 'stop'; id: number }

export type ChildMessage =
  | { type: 'ready'; port: number }
  | { type: 'reply'; id: number; snapshot: ProcessSnapshot }
  | { type: 'failed'; message: string }
