// What the console knows of the deployment it is served by (GET /console/config.json, from the gateway).
import type { ConsoleConfig } from '@meridian/contracts'

export type { ConsoleConfig }

export async function loadConsoleConfig(): Promise<ConsoleConfig> {
  const response = await fetch(`${import.meta.env.BASE_URL}config.json`)
  if (!response.ok) throw new Error(`config.json answered ${response.status}`)
  return (await response.json()) as ConsoleConfig
}
