// mailpitEngine(), the development Mailpit a test shares: found where `./scripts/infra up` runs it (./scripts/test
// runs that first), answering over SMTP and its API; and, where none answers, a failure that names the command to run
// rather than a test that skips.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { mailpitEngine } from '../src/mailpit-engine.ts'

/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

describe('mailpitEngine', () => {
  it('when scripts/infra runs Mailpit, then its SMTP URL, API and version are found without SMTP_URL in the environment', async () => {
    const engine = await mailpitEngine({})
    expect(engine.smtpUrl).toBe('smtp://127.0.0.1:1025')
    expect(engine.url).toBe('http://127.0.0.1:8025')
    expect(engine.version).toMatch(/^Mailpit v\d+\.\d+/)
    const nobody = `nobody-${randomBytes(6).toString('hex')}@example.com`
    expect(await engine.mailbox.search(`to:"${nobody}"`)).toEqual([])
  })

  it('when no Mailpit answers where it is named, then it fails naming the addresses and ./scripts/infra up', async () => {
    const [smtp, api] = [await closedPort(), await closedPort()]
    await expect(
      mailpitEngine({ SMTP_URL: `smtp://127.0.0.1:${smtp}`, MAILPIT_URL: `http://127.0.0.1:${api}` }),
    ).rejects.toThrow(
      new RegExp(`no Mailpit answers at smtp://127\\.0\\.0\\.1:${smtp} .*Run \\./scripts/infra up`),
    )
  })
})
