// The console served by the gateway at /console/ (CONSOLE_DIR): its page and assets with their caching, the
// runtime configuration, and nothing when no console is configured.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from '@meridian/service-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertGatewayConfig, loadGatewayConfig } from '../src/config.ts'
import { startGateway, type TestGateway } from './support/gateway.ts'

describe('gateway: the console at /console/', () => {
  let dir: string
  let gateway: TestGateway
  let bare: TestGateway
  let hinted: TestGateway

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-'))
    mkdirSync(join(dir, 'assets'))
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Meridian console</title>')
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("hi")')
    gateway = await startGateway({
      routes: [],
      env: { CONSOLE_DIR: dir, CONSOLE_PAYMENT_PROVIDER_URL: 'http://127.0.0.1:4099' },
    })
    bare = await startGateway({ routes: [] })
    hinted = await startGateway({
      routes: [],
      env: {
        CONSOLE_DIR: dir,
        CONSOLE_PAYMENT_PROVIDER_URL: 'http://127.0.0.1:4099',
        CONSOLE_SIGN_IN_HINT: 'Demo data: sign in as demo-customer@example.com',
      },
    })
  })

  afterAll(async () => {
    await gateway?.close()
    await bare?.close()
    await hinted?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('when /console is asked, then it moves to /console/, which is the page, never cached, not framable', async () => {
    const moved = await fetch(`${gateway.url}/console`, { redirect: 'manual' })
    expect(moved.status).toBe(301)
    expect(moved.headers.get('location')).toBe('/console/')
    const page = await fetch(`${gateway.url}/console/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('cache-control')).toBe('no-cache')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(await page.text()).toContain('Meridian console')
  })

  it('when an asset is asked, then it is served to be kept (its name changes with its content)', async () => {
    const asset = await fetch(`${gateway.url}/console/assets/index-abc123.js`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(await asset.text()).toBe('console.log("hi")')
  })

  it('when the page reads config.json, then it gets the payment provider a browser reaches', async () => {
    const config = await fetch(`${gateway.url}/console/config.json`)
    expect(config.status).toBe(200)
    expect(config.headers.get('cache-control')).toBe('no-store')
    expect(await config.json()).toEqual({ paymentProviderUrl: 'http://127.0.0.1:4099' })
  })

  it('when a sign-in hint is set (./scripts/dev --demo), then config.json carries it for the sign-in page', async () => {
    const config = await fetch(`${hinted.url}/console/config.json`)
    expect(await config.json()).toEqual({
      paymentProviderUrl: 'http://127.0.0.1:4099',
      signInHint: 'Demo data: sign in as demo-customer@example.com',
    })
  })

  it('when a sign-in hint is set in production, then the gateway refuses its configuration, naming the variable', () => {
    const development = loadGatewayConfig({ NODE_ENV: 'development' })
    let refused: unknown
    try {
      assertGatewayConfig({
        ...development,
        NODE_ENV: 'production',
        CONSOLE_SIGN_IN_HINT: 'customer demo-customer@example.com password demo-customer-password',
      })
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(ConfigError)
    expect((refused as ConfigError).problems).toEqual([
      'CONSOLE_SIGN_IN_HINT: development only (it shows demo accounts to anyone); unset it in production',
    ])
    // the value itself is never echoed
    expect((refused as ConfigError).message).not.toContain('demo-customer-password')
    // outside production the same hint is accepted
    expect(() =>
      assertGatewayConfig({ ...development, CONSOLE_SIGN_IN_HINT: 'customer demo-customer@example.com' }),
    ).not.toThrow()
  })

  it('when a file is not there or the path climbs out, then 404', async () => {
    expect((await fetch(`${gateway.url}/console/nope.js`)).status).toBe(404)
    expect((await fetch(`${gateway.url}/console/..%2f..%2fetc%2fpasswd`)).status).toBe(404)
  })

  it('when no CONSOLE_DIR is set, then /console is not served', async () => {
    expect((await fetch(`${bare.url}/console/`)).status).toBe(404)
  })
})
