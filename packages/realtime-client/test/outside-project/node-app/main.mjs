// A plain Node project's use of the SDK installed from its tarball: connect with a token, hear welcome and a broadcast,
// get an echo, and be refused a request. Prints what it heard as one JSON line.
// node main.mjs <url> [entry]: entry is the package's import (default) or its browser bundle.
const [url, entry = '@meridian/realtime-client'] = process.argv.slice(2)
const { createRealtimeClient, request, RealtimeRequestError } = await import(entry)

const client = createRealtimeClient({ url, token: () => 'outside-token', reconnection: false })
const socket = client.namespace('/')
const welcome = new Promise((resolve) => socket.once('welcome', resolve))
// every argument, to show what a handler receives when the server has connection-state recovery
const broadcast = new Promise((resolve) => socket.once('new_message', (...args) => resolve(args)))
const echo = await request(socket, 'echo', { from: 'outside' })
const refusal = await request(socket, 'join', { room: 'closed' }).then(
  () => undefined,
  (error) => ({ typed: error instanceof RealtimeRequestError, code: error.code, message: error.message }),
)
process.stdout.write(
  `${JSON.stringify({ welcome: await welcome, echo, refusal, broadcast: await broadcast })}\n`,
)
client.close()
