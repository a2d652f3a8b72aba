// The seed command's own refusals, before it touches anything: outside development, without auth's database, with a
// URL that is none, with an argument it does not know; its help and the sign-in hint. (What it makes against the
// whole system: tests/e2e/test/demo-seed.test.ts.)
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { demoSignInHint, runSeedCommand, seedSettings, seedUsage } from '../src/demo/index.ts'

async function run(argv: string[], env: NodeJS.ProcessEnv) {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out: string[] = []
  const err: string[] = []
  stdout.on('data', (chunk) => out.push(String(chunk)))
  stderr.on('data', (chunk) => err.push(String(chunk)))
  const code = await runSeedCommand(argv, env, { stdout, stderr })
  return { code, stdout: out.join(''), stderr: err.join('') }
}

const development = {
  NODE_ENV: 'development',
  AUTH_DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:1/auth',
}

describe('the seed command', () => {
  it('when NODE_ENV is production or unset, then it refuses before reaching anything', async () => {
    for (const mode of ['production', undefined, 'staging']) {
      const result = await run([], { ...development, NODE_ENV: mode })
      expect(result.code, String(mode)).toBe(1)
      expect(result.stderr).toMatch(/^seed: refused: NODE_ENV is /)
      expect(result.stdout).toBe('')
    }
  })

  it("when auth's database is not given, then it says which variable is missing", () => {
    expect(() => seedSettings({ NODE_ENV: 'development' })).toThrow(/AUTH_DATABASE_URL is required/)
  })

  it('when a URL ends in slashes, then they are cut, however many (in linear time)', () => {
    const settings = seedSettings({ ...development, MERIDIAN_GATEWAY_URL: 'http://127.0.0.1:8080///' })
    expect(settings.gatewayUrl).toBe('http://127.0.0.1:8080')
    const slashes = '/'.repeat(100_000)
    expect(
      seedSettings({ ...development, MERIDIAN_PAYMENT_PROVIDER_URL: `http://127.0.0.1:3099${slashes}` })
        .paymentProviderUrl,
    ).toBe('http://127.0.0.1:3099')
  })

  it('when a URL is not an http(s) URL, then it names the variable', () => {
    expect(() => seedSettings({ ...development, MERIDIAN_GATEWAY_URL: 'not a url' })).toThrow(
      "MERIDIAN_GATEWAY_URL must be an http(s) URL (got 'not a url')",
    )
    expect(() => seedSettings({ ...development, MERIDIAN_PAYMENT_PROVIDER_URL: 'ftp://127.0.0.1/' })).toThrow(
      /MERIDIAN_PAYMENT_PROVIDER_URL must be an http\(s\) URL/,
    )
    expect(() => seedSettings({ ...development, REDIS_URL: 'http://127.0.0.1:6379' })).toThrow(
      'REDIS_URL must be a redis:// URL',
    )
  })

  it('when nothing is set but the database, then the local system is meant (gateway 8080, simulator 3099)', () => {
    expect(seedSettings({ ...development, MERIDIAN_GATEWAY_URL: 'http://127.0.0.1:8080/' })).toEqual({
      gatewayUrl: 'http://127.0.0.1:8080',
      paymentProviderUrl: 'http://127.0.0.1:3099',
      authDatabaseUrl: development.AUTH_DATABASE_URL,
      redisUrl: 'redis://127.0.0.1:6379',
    })
  })

  it('when an argument is unknown, then it exits 2 with the usage', async () => {
    const result = await run(['--everything'], development)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('seed: unknown argument: --everything')
    expect(result.stderr).toContain(seedUsage)
  })

  it('when asked for help or for the sign-in hint, then it prints that alone, whatever NODE_ENV is', async () => {
    const help = await run(['--help'], {})
    expect(help).toEqual({ code: 0, stdout: `${seedUsage}\n`, stderr: '' })
    const hint = await run(['--sign-in-hint'], {})
    expect(hint).toEqual({ code: 0, stdout: `${demoSignInHint}\n`, stderr: '' })
    expect(demoSignInHint.length).toBeLessThanOrEqual(500)
  })
})
