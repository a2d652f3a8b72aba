// The login and consent pages the provider sends users to (/interaction/:uid): server-rendered forms, POST only.
import formbody from '@fastify/formbody'
import { AppError, isApiScope } from '@meridian/contracts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors, type Grant, type InteractionResults } from 'oidc-provider'
import { Type } from 'typebox'
import type { Accounts } from '../../oidc/accounts.ts'
import type { ProviderHost } from '../../oidc/provider-host.ts'
import { consentPage, errorPage, loginPage, pageHeaders } from '../../views/pages.ts'

export interface InteractionRoutesOptions {
  host: ProviderHost
  accounts: Accounts
}

const Params = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 64 }) })
// both optional so that a half-filled form shows the login page again rather than a JSON validation error
const LoginBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 320 })),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
})
const hidden = { hide: true }

type UidRequest = FastifyRequest<{ Params: { uid: string } }>

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).headers(pageHeaders).send(body)
}

/** An interaction that is missing, expired, from another browser or for another step: a page, not JSON. */
class InteractionMismatch extends Error {}

export async function interactionRoutes(app: FastifyInstance, { host, accounts }: InteractionRoutesOptions) {
  // the forms post application/x-www-form-urlencoded; only this context parses it
  await app.register(formbody)

  /**
   * The interaction of this browser (the provider's signed interaction cookie) for the uid in the path, at the
   * expected prompt. The cookie is what ties a form post to the browser that started the flow.
   */
  async function interactionOf(request: UidRequest, reply: FastifyReply, prompt?: string) {
    const provider = host.current()
    const details = await provider.interactionDetails(request.raw, reply.raw)
    if (details.uid !== request.params.uid) throw new InteractionMismatch('interaction does not match')
    if (prompt && details.prompt.name !== prompt) throw new InteractionMismatch(`not at the ${prompt} step`)
    return { provider, details }
  }

  async function finish(
    request: UidRequest,
    reply: FastifyReply,
    result: InteractionResults,
    mergeWithLastSubmission: boolean,
  ) {
    const returnTo = await host
      .current()
      .interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission })
    // Back to the authorization on the origin the browser came by (returnTo names the public one): the
    // provider's cookies belong to that origin, which may be another name of the same gateway (localhost and
    // 127.0.0.1, or the console's development server proxying to it).
    const { pathname, search } = new URL(returnTo)
    return reply.redirect(`${pathname}${search}`, 303)
  }

  /** Provider errors here mean a stale or foreign interaction: the user starts again from the application. */
  function interactionError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    if (error instanceof InteractionMismatch || error instanceof errors.OIDCProviderError) {
      request.log.warn({ reason: error.message }, 'interaction refused')
      return sendPage(
        reply,
        400,
        errorPage(
          'Sign-in expired',
          'This sign-in is no longer valid. Go back to the application and try again.',
        ),
      )
    }
    throw error
  }

  app.get<{ Params: { uid: string } }>(
    '/interaction/:uid',
    { schema: { ...hidden, params: Params } },
    async (request, reply) => {
      try {
        const { provider, details } = await interactionOf(request, reply)
        const client = await provider.Client.find(String(details.params.client_id))
        const clientName = client?.clientName ?? client?.clientId ?? 'the application'
        const uid = details.uid
        if (details.prompt.name === 'login') return sendPage(reply, 200, loginPage({ uid, clientName }))
        if (details.prompt.name === 'consent') {
          const {
            missingOIDCScope = [],
            missingOIDCClaims = [],
            missingResourceScopes = {},
          } = details.prompt.details
          // the API's own scopes (OpenID Connect's, also offered for the API resource, are the list above)
          const apiScopes = [...new Set(Object.values(missingResourceScopes).flat())].filter(isApiScope)
          return sendPage(
            reply,
            200,
            consentPage({ uid, clientName, scopes: missingOIDCScope, claims: missingOIDCClaims, apiScopes }),
          )
        }
        throw new InteractionMismatch(`unsupported prompt ${details.prompt.name}`)
      } catch (error) {
        return interactionError(error, request, reply)
      }
    },
  )

  app.post<{ Params: { uid: string }; Body: { email?: string; password?: string } }>(
    '/interaction/:uid/login',
    { schema: { ...hidden, params: Params, body: LoginBody } },
    async (request, reply) => {
      try {
        const { provider, details } = await interactionOf(request, reply, 'login')
        const { email = '', password = '' } = request.body ?? {}
        const client = await provider.Client.find(String(details.params.client_id))
        const clientName = client?.clientName ?? 'the application'
        let accountId: string | undefined
        try {
          accountId = email && password ? await accounts.authenticate(email, password, request.ip) : undefined
        } catch (error) {
          if (!(error instanceof AppError && error.statusCode === 429)) throw error
          request.log.warn({ uid: details.uid }, 'interaction login throttled')
          if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
          return sendPage(
            reply,
            429,
            loginPage({ uid: details.uid, clientName, email, problem: 'throttled' }),
          )
        }
        if (!accountId) {
          request.log.warn({ uid: details.uid }, 'interaction login failed')
          return sendPage(reply, 401, loginPage({ uid: details.uid, clientName, email, problem: 'invalid' }))
        }
        return await finish(request, reply, { login: { accountId } }, false)
      } catch (error) {
        return interactionError(error, request, reply)
      }
    },
  )

  app.post<{ Params: { uid: string } }>(
    '/interaction/:uid/confirm',
    { schema: { ...hidden, params: Params } },
    async (request, reply) => {
      try {
        const { provider, details } = await interactionOf(request, reply, 'consent')
        const accountId = details.session?.accountId
        const clientId = details.params.client_id
        if (!accountId || !clientId) throw new InteractionMismatch('consent without a signed-in user')
        // an existing grant (earlier consent of this user to this client) is extended, else a new one made
        const grant: Grant =
          (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
          new provider.Grant({ accountId, clientId })
        const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = details.prompt.details
        if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '))
        if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims)
        for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
          grant.addResourceScope(indicator, scopes.join(' '))
        }
        const grantId = await grant.save()
        return await finish(request, reply, { consent: { grantId } }, true)
      } catch (error) {
        return interactionError(error, request, reply)
      }
    },
  )

  app.post<{ Params: { uid: string } }>(
    '/interaction/:uid/abort',
    { schema: { ...hidden, params: Params } },
    async (request, reply) => {
      try {
        await interactionOf(request, reply)
        return await finish(
          request,
          reply,
          { error: 'access_denied', error_description: 'End-User aborted interaction' },
          false,
        )
      } catch (error) {
        return interactionError(error, request, reply)
      }
    },
  )
}
