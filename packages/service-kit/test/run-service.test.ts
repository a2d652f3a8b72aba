// startService's stop: the app closes first (its plugins still use the clients), then the process's clients in order.
import { afterEach, describe, expect, it } from 'vitest'
import { type ServiceClient, startService } from '../src/index.ts'
import { buildChassisApp } from './chassis-app.ts'

const processConfig = {
  HOST: '127.0.0.1',
  PORT: 0,
  SERVICE_HOST: '127.0.0.1',
  CONSUL_HTTP_ADDR: 'http://127.0.0.1:1',
  CONSUL_REGISTER: false,
  SERVICE_VERSION: '1.2.3',
  SERVICE_REGION: 'local',
  SERVICE_AZ: 'local-a',
  SERVICE_WEIGHT: 1,
}

describe('startService', () => {
  let stop: (() => Promise<void>) | undefined
  afterEach(async () => {
    await stop?.()
    stop = undefined
  })

  it('when stopped, then the app closes, then each client closes in the order given: pools end, Redis disconnects, timers stop', async () => {
    const { app } = await buildChassisApp()
    const closed: string[] = []
    const clients: ServiceClient[] = [
      { stop: () => void closed.push(app.server.listening ? 'key ring, app still open' : 'key ring') },
      {
        end: async ({ timeout }) => {
          closed.push(`database (timeout ${timeout} s)`)
        },
      },
      { disconnect: () => void closed.push('redis') },
    ]
    const running = await startService({ app, config: processConfig, clients })
    stop = running.stop
    const answer = await fetch(`http://127.0.0.1:${running.port}/health`)
    expect(answer.status).toBe(200)

    await running.stop()
    expect(closed).toEqual(['key ring', 'database (timeout 5 s)', 'redis'])
    // stopping twice closes nothing twice
    await running.stop()
    expect(closed).toHaveLength(3)
  })

  it('when stopped with a drain pause, then it answers not-ready yet still serves for the pause, and only then closes', async () => {
    const { app } = await buildChassisApp()
    const running = await startService({ app, config: { ...processConfig, DRAIN_PAUSE_MS: 800 } })
    stop = running.stop
    const base = `http://127.0.0.1:${running.port}`
    const stopping = running.stop()
    const ready = await fetch(`${base}/health/ready`)
    expect(ready.status).toBe(503)
    // a caller that has not noticed yet is still served
    expect((await fetch(`${base}/health`)).status).toBe(200)
    expect(app.server.listening).toBe(true)
    await stopping
    expect(app.server.listening).toBe(false)
    await expect(fetch(`${base}/health`)).rejects.toThrow()
  })

  it('when a client fails to close, then the failure is logged and the clients after it still close', async () => {
    const { app, logs } = await buildChassisApp()
    const closed: string[] = []
    const running = await startService({
      app,
      config: processConfig,
      clients: [
        {
          end: async () => {
            throw new Error('connection already broken')
          },
        },
        { disconnect: async () => void closed.push('redis') },
      ],
    })
    await running.stop()
    expect(closed).toEqual(['redis'])
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'closing a client failed',
        err: expect.objectContaining({ message: 'connection already broken' }),
      }),
    )
  })
})
