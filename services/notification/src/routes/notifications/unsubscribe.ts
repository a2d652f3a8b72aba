// /api/v1/notifications/unsubscribe?token=…: the link of every notification mail's List-Unsubscribe. Public (the token
// is the credential: signed for one user, one type and one address). POST with `List-Unsubscribe=One-Click` is RFC
// 8058's one-click unsubscribe, which mail clients send without a person; GET, which link scanners and prefetchers
// also send, only shows a page whose button makes that POST, so nothing is turned off by merely following the link.
// A token that does not verify is 400 in the error envelope, and changes nothing.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { UnsubscribeBody, UnsubscribeQuery, UnsubscribeResult } from '@meridian/contracts'
import { html } from '@meridian/mail'
import { errorResponses } from '@meridian/service-kit'
import type { FastifyReply } from 'fastify'
import type { PreferenceUseCases } from '../../domain/preferences.ts'

export type UnsubscribeRoutesOptions = { preferences: PreferenceUseCases }

/** The most a one-click body may hold: `List-Unsubscribe=One-Click`, or a small multipart form of it. */
const bodyLimit = 4096

const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
}

/** A notification type as a person reads it: shipment_created -> "shipment created". */
const spoken = (type: string) => type.replaceAll('_', ' ')

function page(reply: FastifyReply, title: string, body: ReturnType<typeof html>): FastifyReply {
  return reply.headers(pageHeaders).send(
    html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>
<body style="font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 480px; margin: 48px auto; padding: 0 16px">
<h1 style="font-size: 20px">${title}</h1>
${body}
</body></html>
`.toString(),
  )
}

/** The value of the List-Unsubscribe field of a multipart/form-data body (RFC 8058 allows either form encoding). */
function multipartField(body: string): string | undefined {
  const at = body.indexOf('name="List-Unsubscribe"')
  if (at === -1) return undefined
  const start = body.indexOf('\r\n\r\n', at)
  if (start === -1) return undefined
  const end = body.indexOf('\r\n', start + 4)
  return body.slice(start + 4, end === -1 ? undefined : end).trim()
}

export const unsubscribeRoutes: FastifyPluginAsyncTypebox<UnsubscribeRoutesOptions> = async (
  app,
  { preferences },
) => {
  const tags = ['notifications']
  // only this context parses forms: the rest of the service takes JSON alone
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  )
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'string', bodyLimit },
    (_request, body, done) => {
      const value = multipartField(String(body))
      done(null, value === undefined ? {} : { 'List-Unsubscribe': value })
    },
  )

  app.get(
    '/notifications/unsubscribe',
    {
      schema: {
        tags,
        summary: 'The unsubscribe link of a notification mail: a page asking to confirm (public)',
        description:
          'Shows a page whose button POSTs the one-click unsubscribe. Nothing changes on GET (link scanners follow links). A token that does not verify is 400.',
        security: [],
        querystring: UnsubscribeQuery,
        response: errorResponses(400, 422),
      },
    },
    async (request, reply) => {
      const { type } = preferences.verify(request.query.token)
      const action = `?token=${encodeURIComponent(request.query.token)}`
      return page(
        reply,
        'Stop these e-mails?',
        html`<p>You will no longer receive e-mails about <strong>${spoken(type)}</strong>. Your other e-mails, and your notifications in the app, stay as they are.</p>
<form method="post" action="${action}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
      )
    },
  )

  app.post(
    '/notifications/unsubscribe',
    {
      schema: {
        tags,
        summary:
          "One-click unsubscribe (RFC 8058, public): e-mail of the token's notification type off for its user",
        description:
          'Body `List-Unsubscribe=One-Click` (application/x-www-form-urlencoded or multipart/form-data), as mail clients send it. Only e-mail of that type is turned off, for that user. A token that does not verify is 400 and changes nothing. A browser (Accept: text/html) gets a page.',
        security: [],
        querystring: UnsubscribeQuery,
        body: UnsubscribeBody,
        response: { 200: UnsubscribeResult, ...errorResponses(400, 422) },
      },
    },
    async (request, reply) => {
      const { type } = await preferences.unsubscribe(request.query.token)
      if (request.headers.accept?.includes('text/html'))
        return page(
          reply,
          'Unsubscribed',
          html`<p>You will no longer receive e-mails about <strong>${spoken(type)}</strong>.</p>`,
        )
      return { unsubscribed: true as const, type }
    },
  )
}
