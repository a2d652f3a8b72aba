// What the console knows of the deployment it is served by (GET /console/config.json, from the gateway).
export interface ConsoleConfig {
  /** where a browser tokenizes a card (the payment provider's simulator in development) */
  paymentProviderUrl: string
}

export async function loadConsoleConfig(): Promise<ConsoleConfig> {
  const response = await fetch(`${import.meta.env.BASE_URL}config.json`)
  if (!response.ok) throw new Error(`config.json answered ${response.status}`)
  return (await response.json()) as ConsoleConfig
}
