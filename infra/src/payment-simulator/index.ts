// The payment provider simulator (@meridian/infra/payment-simulator): in-process for tests, main.ts as a process.
export { type CardBehavior, type CardBrand, luhnValid, testCards } from './cards.ts'
export {
  defaultDelayMs,
  defaultHangMs,
  defaultPort,
  type LatencyRange,
  optionsFromEnv,
  type PaymentSimulatorOptions,
  type RefundBehavior,
  refundBehaviors,
} from './options.ts'
export {
  createPaymentSimulator,
  type OrderSummary,
  type PaymentSimulator,
  type SimulatorFaults,
  type SimulatorStats,
} from './simulator.ts'
