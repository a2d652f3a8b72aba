import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { afterEach, describe, expect, it } from 'vitest'
import { PidFile } from '../src/native/engine.ts'
import { assertPortsFree, isAlive, PortInUseError, stopPid, tcpListener } from '../src/processes.ts'

describe('ports and processes', () => {
  let server: Server | undefined

  afterEach(async () => {
    if (server) await new Promise((resolve) => server?.close(resolve))
    server = undefined
  })

  async function listen(host = '127.0.0.1'): Promise<number> {
    server = createServer()
    server.listen(0, host)
    await once(server, 'listening')
    const address = server.address()
    if (!address || typeof address === 'string') throw new Error('no port')
    return address.port
  }

  it('when a port is held by another process, then starting an engine there fails naming the port and that process', async () => {
    const port = await listen()
    expect(tcpListener(port)).toMatchObject({ port, pid: process.pid })
    let error: unknown
    try {
      assertPortsFree('redis', [port])
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(PortInUseError)
    expect((error as Error).message).toContain(`port ${port} is already held by process ${process.pid}`)
    expect((error as Error).message).toMatch(/node/)
  })

  it('when the port belongs to the engine recorded as ours, then it is not reported as taken', async () => {
    const port = await listen()
    expect(() => assertPortsFree('redis', [port], process.pid)).not.toThrow()
  })

  it('when a port is held on another address than 127.0.0.1, then it is held, but not for binding 127.0.0.1', async () => {
    // a cluster campaign's proxies listen on test hosts' addresses (198.18.x.y) on ports a system beside it may draw
    const port = await listen('127.0.0.2')
    expect(tcpListener(port)).toMatchObject({ port, pid: process.pid })
    expect(tcpListener(port, '127.0.0.1')).toBeUndefined()
    await new Promise((resolve) => server?.close(resolve))
    const onLoopback = await listen('127.0.0.1')
    expect(tcpListener(onLoopback, '127.0.0.1')).toMatchObject({ port: onLoopback, pid: process.pid })
    await new Promise((resolve) => server?.close(resolve))
    const onAny = await listen('0.0.0.0')
    expect(tcpListener(onAny, '127.0.0.1')).toMatchObject({ port: onAny, pid: process.pid })
  })

  it('when nobody listens on a port, then it is free', async () => {
    const port = await listen()
    await new Promise((resolve) => server?.close(resolve))
    server = undefined
    expect(tcpListener(port)).toBeUndefined()
  })

  it('when a recorded process is stopped by its pid, then it is no longer alive and its pid file reads as not running', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' })
    const pid = child.pid!
    const exited = once(child, 'exit')
    const pidFile = new PidFile(mkdtempSync(`${tmpdir()}/pid-`))
    pidFile.write(pid)
    expect(pidFile.live()).toBe(pid)
    await stopPid(pid, 'SIGTERM', 5000)
    await exited
    expect(isAlive(pid)).toBe(false)
    expect(pidFile.live()).toBeUndefined()
  })
  it('when a recorded pid now belongs to a different process (pid reused after a reboot), then it is not taken for ours', () => {
    const pidFile = new PidFile(mkdtempSync(`${tmpdir()}/pid-`))
    writeFileSync(pidFile.path, `${process.pid} 1\n`) // this pid, but a start time that is not this process's
    expect(pidFile.live()).toBeUndefined()
    pidFile.write(process.pid)
    expect(pidFile.live()).toBe(process.pid)
  })
})
