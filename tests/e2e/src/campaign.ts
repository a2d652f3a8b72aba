// What the campaigns' runs share: a fault struck beside the work (its failure kept for after it, never an unhandled
// rejection), the databases the reconciliation reads, and a campaign command's exit.
import { createDatabase, type Sql } from '@meridian/db'
import type { MeridianSystem } from '@meridian/infra/system'
import type { ReconcileDatabases } from './reconcile.ts'

export interface CampaignFault {
  name: string
  what: string
  /** strikes while the work is under way (started with its first request) */
  strike(system: MeridianSystem): Promise<void>
}

/** A pool of the run's service database (order, inventory, shipping) for the reconciliation. */
export function database(system: MeridianSystem, service: string): Sql {
  const url = system.services[service]?.databaseUrl
  if (!url) throw new Error(`${service} has no database in this run`)
  return createDatabase(url, { max: 2, applicationName: 'faults' })
}

/** Starts the fault; the promise resolves with its failure, or undefined once it has struck. */
export function strikeBeside(fault: CampaignFault, system: MeridianSystem): Promise<unknown> {
  return fault.strike(system).then(
    () => undefined,
    (error: unknown) => error,
  )
}

/** Pools of order's, inventory's and shipping's databases for `work`, ended after it whatever happened. */
export async function withCampaignDatabases<T>(
  system: MeridianSystem,
  work: (databases: ReconcileDatabases) => Promise<T>,
): Promise<T> {
  const databases = {
    order: database(system, 'order'),
    inventory: database(system, 'inventory'),
    shipping: database(system, 'shipping'),
  }
  try {
    return await work(databases)
  } finally {
    await Promise.all(Object.values(databases).map((sql) => sql.end()))
  }
}

/** Runs a campaign command's main and exits with its code; a failure is said and exits 1. */
export function exitWith(main: () => Promise<number>, say: (line: string) => void): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      say(error instanceof Error ? (error.stack ?? error.message) : String(error))
      process.exit(1)
    },
  )
}

/**
 * The saga's, the returns' and the reconciler's timings for a campaign: long enough not to give up on a 10 s outage
 * or a restart (a return's step waits 5, 10, 20, … s, 6 attempts).
 */
export const campaignTimings = {
  order: {
    SAGA_STEP_TIMEOUT_MS: '15000',
    SAGA_STEP_ATTEMPTS: '4',
    SAGA_COMPENSATION_BACKOFF_MS: '2000',
    SAGA_COMPENSATION_ATTEMPTS: '8',
    SAGA_SWEEP_INTERVAL_MS: '500',
    RETURN_STEP_TIMEOUT_MS: '5000',
    RETURN_STEP_ATTEMPTS: '6',
  },
  payment: { PAYMENT_RECONCILE_INTERVAL_MS: '2000', PAYMENT_RECONCILE_AFTER_MS: '10000' },
}
