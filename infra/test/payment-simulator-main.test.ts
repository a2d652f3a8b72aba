import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../src/free-port.ts'
import { scaledMs } from '../src/test-time.ts'

const infraDir = fileURLToPath(new URL('..', import.meta.url))
const entry = fileURLToPath(new URL('../src/payment-simulator/main.ts', import.meta.url))

describe('payment simulator process (main.ts)', () => {
  let child: ChildProcess | undefined

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    child = undefined
  })

  it(
    'when started with PORT, then it answers there, logs one JSON line per request without the card number, and stops on SIGTERM',
    async () => {
      const port = await freePort()
      // node --import tsx: one process, so that the signal reaches the simulator itself
      const started = spawn(process.execPath, ['--import', 'tsx', entry], {
        cwd: infraDir,
        env: { ...process.env, PORT: String(port), PAYMENT_SIM_SEED: '4' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child = started
      let stdout = ''
      let stderr = ''
      started.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString()
      })
      const listening = new Promise<void>((resolve, reject) => {
        started.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString()
          if (stderr.includes('listening on')) resolve()
        })
        started.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)))
      })
      await listening
      expect(stderr).toContain(`http://127.0.0.1:${port}`)

      const base = `http://127.0.0.1:${port}`
      const methodReply = await fetch(`${base}/v1/payment_methods`, {
        method: 'POST',
        body: new URLSearchParams({
          key: 'pk_test_main',
          type: 'card',
          'card[number]': '4000000000000002',
          'card[exp_month]': '1',
          'card[exp_year]': '2040',
          'card[cvc]': '999',
        }),
      })
      expect(methodReply.status).toBe(200)
      const { id: paymentMethod } = (await methodReply.json()) as { id: string }
      const paid = await fetch(`${base}/v1/payment_intents`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk_test_main', 'idempotency-key': 'main-test-1' },
        body: new URLSearchParams({
          amount: '500',
          currency: 'usd',
          payment_method: paymentMethod,
          confirm: 'true',
          'metadata[orderId]': 'main-order',
        }),
      })
      expect(paid.status).toBe(402)
      expect(((await paid.json()) as { error: { code: string } }).error.code).toBe('card_declined')

      const exited = once(started, 'exit')
      started.kill('SIGTERM')
      const [code] = await exited
      expect(code).toBe(0)
      const lines = stdout.trim().split('\n')
      expect(lines).toHaveLength(2)
      const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(entries[0]).toMatchObject({
        method: 'POST',
        path: '/v1/payment_methods',
        status: 200,
        brand: 'visa',
        last4: '0002',
      })
      expect(entries[1]).toMatchObject({
        method: 'POST',
        path: '/v1/payment_intents',
        status: 402,
        code: 'card_declined',
        orderId: 'main-order',
        idempotencyKey: 'main-test-1',
      })
      expect(stdout).not.toContain('4000000000000002')
      expect(stderr).toContain('SIGTERM: stopping')
    },
    scaledMs(20_000),
  )
})
