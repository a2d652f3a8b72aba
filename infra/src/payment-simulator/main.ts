// The payment provider simulator as a process (scripts/dev, fault runs): PORT (3099), HOST (127.0.0.1) and the
// PAYMENT_SIM_* settings of options.ts; one JSON line per request (and per webhook delivery) on stdout, never a card
// number, key or secret; stops on SIGINT and SIGTERM.
import { optionsFromEnv } from './options.ts'
import { createPaymentSimulator } from './simulator.ts'

const say = (message: string) => process.stderr.write(`[payment-simulator] ${message}\n`)

async function main(): Promise<void> {
  const options = optionsFromEnv(process.env)
  const simulator = await createPaymentSimulator({
    ...options,
    log: (line) => process.stdout.write(`${line}\n`),
  })
  const faults = [
    options.latencyMs ? `latency ${options.latencyMs.min}-${options.latencyMs.max} ms` : '',
    options.failureRate ? `failure rate ${options.failureRate}` : '',
    options.seed !== undefined ? `seed ${options.seed}` : '',
    options.refunds && options.refunds !== 'succeed' ? `refunds ${options.refunds}` : '',
    options.secretKey ? 'one secret key' : '',
    options.webhooks?.length
      ? `webhooks to ${options.webhooks.map((target) => new URL(target.url).origin).join(', ')}`
      : '',
  ].filter(Boolean)
  say(`listening on ${simulator.url}${faults.length ? ` (${faults.join(', ')})` : ''}`)
  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    say(`${signal}: stopping`)
    simulator.close().then(
      () => process.exit(0),
      (error: unknown) => {
        say(`could not stop cleanly: ${error instanceof Error ? error.message : String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

main().catch((error: unknown) => {
  say(error instanceof Error ? error.message : String(error))
  process.exit(1)
})
