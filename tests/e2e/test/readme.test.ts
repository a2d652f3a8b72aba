// The documentation's examples, run as a reader would paste them: README's quick start, the tutorials'
// walkthrough (docs/tutorials/first-api-calls.md, first-order.md, first-return.md) then docs/how-to/payments.md, its
// 3-D Secure too (one shell: each block uses what the blocks before it assigned), and the SDK's quick start
// (docs/tutorials/first-realtime-client.md: its tarball in a project outside the repository); their bash blocks in order
// against the whole system, with the run's gateway, simulator and trace store in place of the development ports (the
// blocks read them from $A, $SIM and $J). Only the line that starts the system is left out: it is running already.
import { describe, expect, inject, it } from 'vitest'
import { bashBlocksOf, page, paste as pasteAgainst, runBash } from '../src/pasted-docs.ts'
import '../src/system-context.ts'

const system = inject('system')
const paste = async (blocks: string[]) => (await pasteAgainst(system, blocks)).stdout

describe('the documentation, pasted', () => {
  it('when blocks run where SHLVL is unset, then bash reads no startup file (it would fail under -u)', async () => {
    const { SHLVL: _level, ...env } = process.env
    const { stdout, stderr } = await runBash('echo "level $SHLVL"', { cwd: '/', env, timeoutMs: 10_000 })
    expect(stdout).toBe('level 1\n')
    expect(stderr).toBe('')
  })

  it("when README's quick start is pasted against the running system, then the order ships and every step succeeds, its trace is found in the trace store with every service it passed through, and its return completes with exactly its line refunded", async () => {
    const blocks = bashBlocksOf(page('README.md'), '## Quick start')
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    const traceBlocks = bashBlocksOf(page('README.md'), '## Seeing an order as one trace')
    expect(traceBlocks).toHaveLength(1)
    // then, in the same shell, the order is returned and the processes' operator API read
    const returnBlocks = [
      ...bashBlocksOf(page('README.md'), '## Returns'),
      ...bashBlocksOf(page('README.md'), '## Long-running processes'),
    ]
    expect(returnBlocks).toHaveLength(2)
    const stdout = (
      await pasteAgainst(system, [...blocks, ...traceBlocks, ...returnBlocks], { J: system.traces.queryUrl })
    ).stdout
    expect(stdout).toMatch(/order [0-9a-f-]{36}: shipped/)
    expect(stdout).toContain('"payment"')
    expect(stdout).toContain('"shipment"')
    // the order's mails, as Mailpit received them
    expect(stdout).toMatch(/^Order [0-9a-f-]{36} placed$/m)
    expect(stdout).toMatch(/^Order [0-9a-f-]{36} shipped$/m)
    expect(stdout).toMatch(/the order's trace: http:\/\/\S+\/trace\/[0-9a-f]{32}\n/)
    for (const service of [
      'gateway',
      'order',
      'payment',
      'inventory',
      'shipping',
      'notification',
      'realtime-gateway',
    ])
      expect(stdout).toMatch(new RegExp(`^${service} [1-9][0-9]*$`, 'm'))
    // the return: completed, exactly the mug refunded once at the provider, the mug back in stock, its process' log
    expect(stdout).toContain('{"href":"/api/v1/orders/')
    expect(stdout).toMatch(/return [0-9a-f-]{36}: completed/)
    expect(stdout).toContain('{"charged":1250,"refunded":1250}')
    expect(stdout).toMatch(/^\{"available":10,"reserved":0\}$/m)
    expect(stdout).toMatch(/^order\nreturn$/m)
    expect(stdout).toMatch(/^refund succeeded$/m)
  })

  it("when the tutorials' walkthrough and the payments how-to are pasted in order, then every step answers as it says", async () => {
    const payments = bashBlocksOf(page('docs/how-to/payments.md'))
    expect(payments).toHaveLength(3)
    const blocks = [
      ...bashBlocksOf(page('docs/tutorials/first-api-calls.md')),
      ...bashBlocksOf(page('docs/tutorials/first-order.md')),
      ...bashBlocksOf(page('docs/tutorials/first-return.md')),
      ...payments,
    ]
    expect(blocks.length).toBeGreaterThanOrEqual(10)
    const stdout = await paste(blocks)
    // the expected refusals were checked by the blocks themselves (jq -e); the statuses they print are these
    expect(stdout).toContain('204')
    expect(stdout).toContain('412')
    // payments: the charge's PaymentIntent, its webhook delivered, a refund and a dispute made at the provider, each
    // reaching payment through its webhook
    expect(stdout).toMatch(/charged as pi_\w+$/m)
    expect(stdout).toMatch(/^needs_response$/m)
    expect(stdout).toContain('{"status":"succeeded","amount":11.9,"refundedAmount":2}')
    // 3-D Secure: the order links the provider's page, confirmed there it ships (until_status checked it)
    expect(stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/3ds\/pi_\w+$/m)
    expect(stdout).toMatch(/^303$/m)
  })

  it("when the SDK's quick start is pasted, then a project outside the repository installs its tarball and hears the channel through the gateway", async () => {
    const blocks = bashBlocksOf(page('docs/tutorials/first-realtime-client.md'), '## Quick start')
    expect(blocks).toHaveLength(2)
    const stdout = await paste(blocks)
    expect(stdout).toMatch(/^Welcome\b.*$/m)
    expect(stdout).toContain('echo: {"hello":"Meridian"}')
  })
})
