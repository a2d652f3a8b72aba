// Services (admins): each service the gateway routes, its instances in Consul with their health, and its maintenance
// switch — turned on with a message and Retry-After, or off — through the gateway's /api/v1/admin/services.
import type { OperatedService, OperatedServices } from '@meridian/contracts'
import { api } from '../api.ts'
import { busy, dataTable, errorBox, h, loading, panel, show } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

export function servicesView({ session }: ViewContext): View {
  const body = h('div', {}, loading('the services'))
  const errors = h('div', { 'aria-live': 'assertive' })
  let timer: ReturnType<typeof setTimeout> | undefined

  async function read(): Promise<void> {
    clearTimeout(timer)
    try {
      const { data } = await api<OperatedServices>('GET', '/api/v1/admin/services', { token: session.token })
      show(body, table(data))
    } catch (error) {
      show(body, errorBox(error))
    }
    // health changes by itself: look again every few seconds while the view is open
    timer = setTimeout(read, 5000)
  }

  function switchFor(service: OperatedService): HTMLElement {
    const path = `/api/v1/admin/services/${service.name}/maintenance`
    if (service.maintenance) {
      const off = h('button', { type: 'button', class: 'secondary' }, 'End maintenance')
      off.addEventListener(
        'click',
        () =>
          void busy(off, errors, async () => {
            await api('DELETE', path, { token: session.token })
            await read()
          }),
      )
      return h(
        'div',
        {},
        h('p', { class: 'maintenance' }, `In maintenance: ${service.maintenance.message}`),
        off,
      )
    }
    const message = h('input', {
      'aria-label': `Maintenance message for ${service.name}`,
      placeholder: 'Message (optional)',
      maxlength: 500,
    })
    const on = h('button', { type: 'button' }, 'Start maintenance')
    on.addEventListener(
      'click',
      () =>
        void busy(on, errors, async () => {
          await api('PUT', path, {
            token: session.token,
            body: message.value.trim() ? { message: message.value.trim() } : {},
          })
          await read()
        }),
    )
    return h('div', { class: 'inline' }, message, on)
  }

  function table(services: OperatedService[]): HTMLElement {
    return dataTable(
      'services',
      'Services routed by the gateway, as Consul knows them',
      ['Service', 'Instances', 'Maintenance'],
      services.map((service) =>
        h(
          'tr',
          { 'data-service': service.name },
          h('th', { scope: 'row' }, service.name),
          h(
            'td',
            {},
            service.instances.length === 0
              ? h('span', { class: 'health health-critical' }, 'no instance')
              : h(
                  'ul',
                  { class: 'instances' },
                  ...service.instances.map((instance) =>
                    h(
                      'li',
                      {},
                      h('span', { class: `health health-${instance.health}` }, instance.health),
                      ` ${instance.address}:${instance.port}`,
                    ),
                  ),
                ),
          ),
          h('td', {}, switchFor(service)),
        ),
      ),
    )
  }

  void read()
  return {
    element: panel('services', 'Services', errors, body),
    close: () => clearTimeout(timer),
  }
}
