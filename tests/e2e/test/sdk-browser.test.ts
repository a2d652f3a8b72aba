// The SDK's tarball in Chromium, as a team outside the monorepo would ship it: a Vite page that imports the installed
// package, and a page without a bundler that loads the tarball's browser bundle, each talking to the channel through
// the gateway. Chromium loads the pages at the gateway's origin (the one the channel allows; the test's routes serve
// the files), and their Socket.IO connections are real ones through the gateway.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Customer, e2eClient } from '../src/client.ts'
import { launchChromium } from '../src/console-browser.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)
const run = promisify(execFile)
const sdkDir = fileURLToPath(new URL('../../../packages/realtime-client', import.meta.url))

/** What both pages do: connect with the token in the URL's fragment, then show the welcome and an echo. */
const pageScript = `
const token = new URLSearchParams(window.location.hash.slice(1)).get('token')
const status = document.getElementById('status')
const client = createRealtimeClient({ url: window.location.origin, token: () => token })
client.on('connect_error', (_namespace, error) => { status.textContent = 'refused: ' + error.message })
const main = client.namespace('/')
main.on('welcome', async (welcome) => {
  const { echo } = await request(main, 'echo', { from: 'a page' })
  status.textContent = welcome.message + '; echo: ' + JSON.stringify(echo.payload)
})
`
const html = (script: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SDK</title></head>` +
  `<body><p id="status">connecting</p>${script}</body></html>`

/** Serves `dir` at the gateway's origin under `/sdk-page/` in `page`, opens it, and waits for its status line. */
async function openAtGateway(page: Page, dir: string, token: string): Promise<string> {
  const base = `${system.gatewayUrl}/sdk-page/`
  await page.route(`${base}**`, (route) => {
    const file = new URL(route.request().url()).pathname.slice('/sdk-page/'.length) || 'index.html'
    return route.fulfill({ path: join(dir, file) })
  })
  await page.goto(`${base}#token=${encodeURIComponent(token)}`)
  await page.waitForFunction(
    `(() => { const text = document.getElementById('status').textContent; return text.includes('echo:') || text.startsWith('refused') })()`,
    undefined,
    { timeout: scaledMs(30_000) },
  )
  return String(await page.evaluate(`document.getElementById('status').textContent`))
}

describe('the packed SDK in Chromium, through the gateway', () => {
  let root: string
  let installed: string
  let browser: Browser
  let customer: Customer

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'meridian-sdk-browser-'))
    await run('pnpm', ['pack', '--pack-destination', root], { cwd: sdkDir, timeout: 120_000 })
    const tarball = join(root, (await readdir(root)).find((file) => file.endsWith('.tgz'))!)
    installed = join(root, 'vite-page')
    await mkdir(installed)
    await writeFile(
      join(installed, 'package.json'),
      '{"name":"sdk-vite-page","private":true,"type":"module"}\n',
    )
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball],
      {
        cwd: installed,
        timeout: 120_000,
      },
    )
    // A routed document has no server address, so Chromium's local-network checks take it for a public page and
    // refuse its connections to the loopback gateway; a page served by a real server at that origin is not refused.
    browser = await launchChromium(['--disable-features=LocalNetworkAccessChecks'])
    customer = await client.registerCustomer()
  })

  afterAll(async () => {
    await browser?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('when a Vite page built from the installed tarball is opened, then it connects with its token and hears the channel', async () => {
    await writeFile(join(installed, 'index.html'), html('<script type="module" src="./main.js"></script>'))
    await writeFile(
      join(installed, 'main.js'),
      `import { createRealtimeClient, request } from '@meridian/realtime-client'\n${pageScript}`,
    )
    // the SDK package's own Vite (the page's project has only the tarball and its dependencies)
    await run(
      process.execPath,
      [join(sdkDir, 'node_modules/vite/bin/vite.js'), 'build', '--base', '/sdk-page/', '--logLevel', 'warn'],
      { cwd: installed, timeout: 120_000 },
    )
    const page = await browser.newPage()
    expect(await openAtGateway(page, join(installed, 'dist'), customer.token)).toMatch(
      /^Welcome, .+; echo: \{"from":"a page"\}$/,
    )
    await page.close()
  })

  it("when a page without a bundler loads the tarball's browser bundle, then it connects with its token and hears the channel", async () => {
    const plain = join(root, 'plain-page')
    await mkdir(plain)
    await cp(
      join(installed, 'node_modules/@meridian/realtime-client/dist/browser/realtime-client.js'),
      join(plain, 'realtime-client.js'),
    )
    await writeFile(
      join(plain, 'index.html'),
      html(
        `<script type="module">\nimport { createRealtimeClient, request } from './realtime-client.js'\n${pageScript}</script>`,
      ),
    )
    const page = await browser.newPage()
    expect(await openAtGateway(page, plain, customer.token)).toMatch(
      /^Welcome, .+; echo: \{"from":"a page"\}$/,
    )
    await page.close()
  })
})
