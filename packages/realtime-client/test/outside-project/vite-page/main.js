// A browser page's use of the SDK, bundled by Vite: the channel of the page's own origin, with its cookie session.
import { createRealtimeClient } from '@meridian/realtime-client'

const status = document.getElementById('status')
const client = createRealtimeClient({ url: window.location.origin, withCredentials: true })
client.on('connect', (namespace) => {
  status.textContent = `connected to ${namespace}`
})
client.on('connect_error', (_namespace, error) => {
  status.textContent = `refused: ${error.message}`
})
client.namespace('/').on('welcome', (welcome) => {
  status.textContent = welcome.message
})
