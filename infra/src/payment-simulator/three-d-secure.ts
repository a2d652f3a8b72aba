// The simulator's 3-D Secure page (no API key: it is the customer's browser that comes here, sent by the intent's
// next_action): GET /3ds/:pi shows the amount and two buttons, each a form POSTing to /3ds/:pi/complete with
// outcome=confirm or outcome=refuse; the answer changes the intent (transitions.ts) and redirects (303) to its
// return_url with payment_intent and redirect_status, or says the page may be closed.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestLog } from './core.ts'
import { StripeError } from './errors.ts'
import { formLimits, parseForm } from './form.ts'
import { escapeHtml, readBody, sendHtml } from './http.ts'
import type { IntentRecord, State } from './state.ts'
import type { StripeContext } from './stripe-call.ts'
import { authenticate } from './transitions.ts'

export const isThreeDSecurePath = (path: string): boolean => path.startsWith('/3ds/')

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
form { display: inline-block; margin: 0.5rem 0.5rem 0 0; }
button { font-size: 1rem; padding: 0.6rem 1.2rem; cursor: pointer; }
.note { color: #666; font-size: 0.9rem; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`
}

const amountText = (intent: IntentRecord) =>
  `${(intent.amount / 100).toFixed(2)} ${intent.currency.toUpperCase()}`

function challengePage(intent: IntentRecord): string {
  const action = `/3ds/${encodeURIComponent(intent.id)}/complete`
  const button = (outcome: string, label: string) =>
    `<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="outcome" value="${outcome}"><button type="submit" name="button" value="${outcome}">${label}</button></form>`
  return page(
    '3-D Secure test payment',
    `<p>Authenticate a payment of <strong>${escapeHtml(amountText(intent))}</strong>.</p>
<p class="note">Payment simulator: no bank is asked. Payment ${escapeHtml(intent.id)}.</p>
${button('confirm', 'Complete authentication')}
${button('refuse', 'Fail authentication')}`,
  )
}

function show(res: ServerResponse, status: number, title: string, message: string): void {
  sendHtml(res, status, page(title, `<p>${escapeHtml(message)}</p>`))
}

/** Where the customer goes back to: the return_url with what Stripe adds to it. */
function returnLocation(intent: IntentRecord, returnUrl: string): string {
  const url = new URL(returnUrl)
  url.searchParams.set('payment_intent', intent.id)
  url.searchParams.set('payment_intent_client_secret', intent.clientSecret)
  url.searchParams.set(
    'redirect_status',
    intent.status === 'requires_payment_method' ? 'failed' : 'succeeded',
  )
  return url.toString()
}

async function complete(
  context: StripeContext,
  req: IncomingMessage,
  res: ServerResponse,
  state: State,
  intent: IntentRecord,
): Promise<void> {
  let outcome: string | undefined
  try {
    const values = parseForm(
      await readBody(req, { limit: formLimits.maxBodyBytes, drainUpTo: 16 * formLimits.maxBodyBytes }),
    )
    outcome = typeof values.outcome === 'string' ? values.outcome : undefined
  } catch {
    outcome = undefined
  }
  if (outcome !== 'confirm' && outcome !== 'refuse')
    return show(res, 400, 'Bad request', 'The form must send outcome=confirm or outcome=refuse.')
  try {
    authenticate(
      {
        view: { state, baseUrl: context.baseUrl() },
        emit: (type, object) =>
          context.webhooks.publish(state, type, object, { id: null, idempotencyKey: null }),
      },
      intent,
      outcome,
    )
  } catch (error) {
    if (!(error instanceof StripeError)) throw error
    return show(
      res,
      409,
      'Nothing to authenticate',
      `This payment is ${intent.status}: it is not waiting for authentication.`,
    )
  }
  if (intent.returnUrl) {
    res.writeHead(303, { location: returnLocation(intent, intent.returnUrl), 'content-length': 0 })
    res.end()
    return
  }
  const done =
    intent.status === 'requires_payment_method' ? 'Authentication failed' : 'Authentication complete'
  show(res, 200, done, 'You may close this page.')
}

/** GET /3ds/:pi (the page) and POST /3ds/:pi/complete (its forms). */
export async function threeDSecure(
  context: StripeContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  log: RequestLog,
): Promise<void> {
  const match = /^\/3ds\/([^/]+)(\/complete)?$/.exec(path)
  let intentId: string | undefined
  try {
    intentId = match ? decodeURIComponent(match[1]!) : undefined
  } catch {}
  const state = context.core.state()
  const intent = intentId === undefined ? undefined : state.intents.get(intentId)
  if (!match || !intent) return show(res, 404, 'Not found', 'There is no such payment to authenticate.')
  log.paymentIntent = intent.id
  const method = req.method ?? 'GET'
  if (match[2] === undefined && method === 'GET') {
    if (intent.status !== 'requires_action')
      return show(
        res,
        409,
        'Nothing to authenticate',
        `This payment is ${intent.status}: it is not waiting for authentication.`,
      )
    return sendHtml(res, 200, challengePage(intent))
  }
  if (match[2] !== undefined && method === 'POST') return complete(context, req, res, state, intent)
  show(res, 405, 'Method not allowed', `${method} is not allowed here.`)
}
