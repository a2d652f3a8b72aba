// The run's payment-provider simulator: it speaks Stripe's API to payment, and delivers its webhook events to payment
// as Stripe would, through the run's gateway, signed with the secret payment checks them with; its lines go to
// simulator.log in the run's folder.
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { createPaymentSimulator, type PaymentSimulator } from '../payment-simulator/index.ts'
import { errorText } from '../processes.ts'
import { baseUrlOf, gatewaysOf, type Members } from './members.ts'
import type { RunPlan } from './run-plan.ts'
import type { RunResources } from './system-close.ts'

/** Payment's webhook endpoint (routes/stripe-webhooks), where the run's simulator delivers its events. */
export const paymentWebhookPath = '/api/v1/payments/webhooks/stripe'

/** payment's development default of STRIPE_WEBHOOK_SECRET (services/payment/src/config.ts), public on purpose. */
export const developmentWebhookSecret = 'whsec_meridian_development'

/** The secret payment checks webhooks with: the one its environment gets (SystemOptions, production, baseEnv). */
function webhookSecretOf(plan: RunPlan, production: Record<string, string>): string {
  const { options, baseEnv } = plan
  return (
    options.env?.payment?.STRIPE_WEBHOOK_SECRET ??
    options.env?.['*']?.STRIPE_WEBHOOK_SECRET ??
    options.settings?.STRIPE_WEBHOOK_SECRET ??
    production.STRIPE_WEBHOOK_SECRET ??
    (baseEnv.STRIPE_WEBHOOK_SECRET || developmentWebhookSecret)
  )
}

/**
 * Starts the run's simulator on SystemOptions.simulatorPort (default 3099), its webhooks SystemOptions.simulator's
 * and payment's (when payment is in the run); records it and its log in `resources` for close(). Throws when it
 * cannot listen.
 */
export async function startRunSimulator(
  plan: RunPlan,
  members: Members,
  publicUrl: string,
  production: Record<string, string>,
  resources: RunResources,
): Promise<PaymentSimulator> {
  const { options } = plan
  const simulatorLog = createWriteStream(join(plan.runDir, 'simulator.log'), { flags: 'a' })
  resources.simulatorLog = simulatorLog
  const simulatorPort = options.simulatorPort ?? 3099
  // the simulator delivers its webhook events to payment as Stripe would, through the run's gateway, signed with
  // the secret payment checks them with (the one its environment below gets)
  const paymentMember = members.get('payment')
  const webhookBase = paymentMember
    ? gatewaysOf(members).length > 0
      ? publicUrl
      : baseUrlOf(paymentMember)
    : undefined
  const webhookSecret = webhookSecretOf(plan, production)
  const webhooks = [
    ...(options.simulator?.webhooks ?? []),
    ...(webhookBase ? [{ url: `${webhookBase}${paymentWebhookPath}`, secret: webhookSecret }] : []),
  ]
  try {
    resources.simulator = await createPaymentSimulator({
      // across hosts the services reach it on the machine's address on their bridge
      ...(options.cluster ? { host: options.cluster.machineAddress } : {}),
      ...options.simulator,
      webhooks,
      port: simulatorPort,
      log: (line) => simulatorLog.write(`${line}\n`),
    })
  } catch (error) {
    throw new Error(
      `the payment-provider simulator could not listen on ${simulatorPort}: ${errorText(error)}`,
    )
  }
  return resources.simulator
}
