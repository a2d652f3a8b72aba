// The Meridian console (apps/console, built by Vite) served at /console/: its files from CONSOLE_DIR, and
// /console/config.json with what the page needs to know of this deployment (the payment provider a browser
// tokenizes cards at, and in development a sign-in hint). The page then uses the gateway's public API and the realtime channel like any client.
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import { ConsoleConfig } from '@meridian/contracts'
import type { FastifyPluginAsync } from 'fastify'

export interface ConsoleRoutesOptions {
  /** the console's build (apps/console/dist) */
  dir: string
  /** the payment provider's base URL, as a browser reaches it */
  paymentProviderUrl: string
  /** a line for the sign-in page (development only: the config refuses one in production); empty: none */
  signInHint?: string
}

export const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (
  app,
  { dir, paymentProviderUrl, signInHint },
) => {
  const consoleConfig: ConsoleConfig = { paymentProviderUrl, ...(signInHint ? { signInHint } : {}) }
  const hide = { hide: true }

  app.get('/console', { schema: hide }, (_request, reply) => reply.redirect('/console/', 301))
  app.get(
    '/console/config.json',
    { schema: { ...hide, response: { 200: ConsoleConfig } } },
    async (_request, reply) => reply.header('cache-control', 'no-store').send(consoleConfig),
  )
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/console/',
    // hashed asset names change with their content: they may be kept; index.html must not be
    maxAge: '1y',
    immutable: true,
    setHeaders(response, path) {
      if (path === join(dir, 'index.html')) response.header('cache-control', 'no-cache')
      // the console talks to its own origin and to the payment provider only; nothing is framed
      response.header('x-frame-options', 'DENY')
      response.header('referrer-policy', 'no-referrer')
      response.header('x-content-type-options', 'nosniff')
    },
  })
}
