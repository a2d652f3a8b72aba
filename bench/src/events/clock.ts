// One clock for every process of the events bench: CLOCK_MONOTONIC, shared by all processes of the machine.

/**
 * Milliseconds (fractional) on the system's monotonic clock. process.hrtime reads CLOCK_MONOTONIC, which every process
 * on the machine shares, so a time taken in the writer and one taken in the consumer can be subtracted; Date.now()
 * has only whole milliseconds and can be stepped by NTP.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint() / 1000n) / 1000
