// runMain, the last line of every main.ts: a failed start is said once on stderr and ends the process with code 1.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError, runMain } from '../src/index.ts'

describe('runMain', () => {
  afterEach(() => {
    vi.restoreAllMocks()
    process.exitCode = 0
  })

  async function failedStart(error: unknown): Promise<string> {
    const written: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk))
      return true
    })
    runMain('widgets', () => Promise.reject(error))
    await new Promise((resolve) => setImmediate(resolve))
    return written.join('')
  }

  it('when the configuration is invalid, then stderr names every problem, without a stack, and the exit code is 1', async () => {
    const output = await failedStart(
      new ConfigError(['PORT: must be an integer', 'DATABASE_URL: is required']),
    )
    expect(output).toMatch(/^widgets: invalid configuration:/)
    expect(output).toContain('PORT: must be an integer')
    expect(output).toContain('DATABASE_URL: is required')
    expect(output).not.toContain('    at ')
    expect(process.exitCode).toBe(1)
  })

  it('when the start fails otherwise, then stderr says so with the stack, and the exit code is 1', async () => {
    const output = await failedStart(new Error('the database refused the connection'))
    expect(output).toContain('widgets: failed to start: Error: the database refused the connection')
    expect(output).toContain('    at ')
    expect(process.exitCode).toBe(1)
  })

  it('when main succeeds, then nothing is written and the exit code is untouched', async () => {
    const written = vi.spyOn(process.stderr, 'write')
    runMain('widgets', async () => {})
    await new Promise((resolve) => setImmediate(resolve))
    expect(written).not.toHaveBeenCalled()
    expect(process.exitCode).toBe(0)
  })
})
