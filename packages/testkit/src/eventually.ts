// Waiting in a test for what another process (a consumer, a relay) does in its own time.

/** Resolves once `check` answers true, polling every 100 ms; fails naming `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
