// The secure Consul agent (issue 45) on the real binary: one agent for the file on free ports in a temporary folder.
// What each service's token may and may not do, asked of the agent's HTTP API directly (the kit's own client against
// the same agent: packages/service-kit/test/registry-secure-consul.test.ts); TLS only, from the run's CA; gossip that
// an agent without the key cannot join.
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsulAnswer,
  type ConsulSettings,
  consulCall,
  consulRequest,
  consulSettingsFromEnv,
} from '../src/consul-http.ts'
import { freePort } from '../src/free-port.ts'
import { layoutFromEnv, repoRoot } from '../src/layout.ts'
import { startConsulAgent } from '../src/native/consul.ts'
import { PidFile } from '../src/native/engine.ts'
import { stopPid } from '../src/processes.ts'
import { certificateAuthority } from '../src/secure/certificates.ts'
import { consulServiceRules, type SecureConsulInstance, startSecureConsul } from '../src/secure/consul.ts'
import { eventually } from './eventually.ts'

const root = mkdtempSync(join(tmpdir(), 'meridian-secure-consul-'))
const dir = join(root, 'consul')
let consul: SecureConsulInstance
let startOptions: Parameters<typeof startSecureConsul>[0]
/** pids of the extra agents a test started, stopped in afterAll whatever happened */
const extraAgents: number[] = []

beforeAll(async () => {
  const ca = await certificateAuthority(join(root, 'ca'))
  const ports = { https: await freePort(), serfLan: await freePort(), server: await freePort() }
  startOptions = { dir, ca, host: '127.0.0.1', ports, principals: ['order', 'payment', 'gateway'] }
  consul = await startSecureConsul(startOptions)
})

afterAll(async () => {
  for (const pid of extraAgents) await stopPid(pid, 'SIGINT', 20_000)
  await consul?.stop()
  rmSync(root, { recursive: true, force: true })
})

const as = (principal: string): ConsulSettings => consulSettingsFromEnv(consul.envFor(principal))
const admin = (): ConsulSettings => consulSettingsFromEnv(consul.adminEnv())

/** Registers an instance of `name` with the settings' token: Consul's answer. */
function register(
  settings: ConsulSettings,
  name: string,
  id = `${name}-${randomUUID()}`,
): Promise<ConsulAnswer> {
  return consulRequest(settings, 'PUT', '/v1/agent/service/register', {
    body: { ID: id, Name: name, Address: '127.0.0.1', Port: 1 },
  })
}

describe('the secure Consul agent', () => {
  it('when it has started, then its credentials are in a file only its owner reads, and its log holds no token', () => {
    expect(statSync(join(dir, 'credentials.json')).mode & 0o077).toBe(0)
    const log = readFileSync(consul.logFile, 'utf8')
    for (const principal of ['order', 'payment', 'gateway']) {
      expect(log).not.toContain(consul.envFor(principal).CONSUL_HTTP_TOKEN)
    }
    expect(log).not.toContain(consul.adminEnv().CONSUL_HTTP_TOKEN)
    expect(consul.envFor('order')).toEqual({
      CONSUL_HTTP_ADDR: consul.address,
      CONSUL_HTTP_TOKEN: expect.stringMatching(/^[0-9a-f-]{36}$/),
      CONSUL_CACERT: join(root, 'ca', 'ca.pem'),
    })
    expect(() => consul.envFor('shipping')).toThrow(/'shipping' is not a principal/)
  })

  it("when order's token registers order and its run's order-run1, then both are accepted; payment, orderx or no token, refused", async () => {
    expect((await register(as('order'), 'order')).status).toBe(200)
    expect((await register(as('order'), 'order-run1')).status).toBe(200)

    const payment = await register(as('order'), 'payment')
    expect(payment.status).toBe(403)
    expect(payment.text).toMatch(/Permission denied/i)
    // the prefix is `order-`, not `order`: another service's name that merely starts the same is not order's
    expect((await register(as('order'), 'orderx')).status).toBe(403)

    const anonymous = await register({ ...as('order'), token: '' }, 'order')
    expect(anonymous.status).toBe(403)
    const unknown = await register({ ...as('order'), token: randomUUID() }, 'order')
    expect(unknown.status).toBe(403)
    expect(unknown.text).toMatch(/ACL not found/i)
  })

  it("when payment's token registered payment, then order's token discovers it (service and node read)", async () => {
    expect((await register(as('payment'), 'payment', 'payment-discovered')).status).toBe(200)
    const found = await eventually('payment in the catalogue, as order sees it', async () => {
      const entries = JSON.parse(await consulCall(as('order'), 'GET', '/v1/health/service/payment')) as {
        Service: { ID: string }
      }[]
      return entries.some((entry) => entry.Service.ID === 'payment-discovered') ? entries : undefined
    })
    expect(found.length).toBeGreaterThan(0)
  })

  it('when a service touches runtime settings, then it reads its own and writes none; the gateway writes every one', async () => {
    const key = (name: string) => `/v1/kv/meridian/${name}/maintenance`
    // read allowed: no key yet is 404, not 403
    expect((await consulRequest(as('order'), 'GET', key('order'))).status).toBe(404)
    expect((await consulRequest(as('order'), 'GET', key('order-run1'))).status).toBe(404)
    expect((await consulRequest(as('order'), 'GET', key('payment'))).status).toBe(403)
    expect((await consulRequest(as('order'), 'PUT', key('order'), { body: 'on' })).status).toBe(403)

    expect((await consulRequest(as('gateway'), 'PUT', key('order-run1'), { body: 'on' })).status).toBe(200)
    expect((await consulRequest(as('order'), 'GET', key('order-run1'))).status).toBe(200)
    expect((await consulRequest(as('gateway'), 'PUT', '/v1/kv/elsewhere/x', { body: 'on' })).status).toBe(403)
  })

  it("when the agent's rules are read back, then each service's policy is the one consulServiceRules says, and the one docs show", async () => {
    const policy = JSON.parse(
      await consulCall(admin(), 'GET', '/v1/acl/policy/name/meridian-service-order'),
    ) as { Rules: string }
    expect(policy.Rules).toBe(consulServiceRules('order'))
    // docs/how-to/deploying.md shows order's policy verbatim
    const deploying = readFileSync(join(repoRoot, 'docs', 'how-to', 'deploying.md'), 'utf8')
    expect(deploying).toContain(`\`\`\`hcl\n${consulServiceRules('order')}\`\`\``)
    expect(consulServiceRules('gateway')).toContain('key_prefix "meridian/" { policy = "write" }')
    expect(consulServiceRules('order')).not.toContain('key_prefix "meridian/" ')
    expect(() => consulServiceRules('order" { policy = "write" } key_prefix "')).toThrow(/must match/)
  })

  it('when plain HTTP is spoken to its port, then nothing of Consul answers; and it has no plain HTTP port or DNS', async () => {
    const plain = await consulRequest(
      { address: consul.address.replace(/^https:/, 'http:') },
      'GET',
      '/v1/status/leader',
    )
    expect(plain.status).toBe(400)
    expect(plain.text).toMatch(/HTTPS server/)
    const self = JSON.parse(await consulCall(admin(), 'GET', '/v1/agent/self')) as {
      DebugConfig: { HTTPPort: number; DNSPort: number; HTTPSPort: number }
    }
    expect(self.DebugConfig).toMatchObject({
      HTTPPort: -1,
      DNSPort: -1,
      HTTPSPort: Number(new URL(consul.address).port),
    })
  })

  it('when a client does not trust the CA (the system CAs, another CA), then the TLS handshake fails', async () => {
    const { caFile: _ca, ...withoutCa } = as('order')
    await expect(consulRequest(withoutCa, 'GET', '/v1/status/leader')).rejects.toThrow(/certificate/i)
    const otherCa = await certificateAuthority(join(root, 'other-ca'))
    await expect(
      consulRequest({ ...withoutCa, caFile: otherCa.caFile }, 'GET', '/v1/status/leader'),
    ).rejects.toThrow(/certificate/i)
  })

  it('when an agent without the gossip key tries to join, then it never becomes a member; one with the key does', async () => {
    const serfLan = Number(
      JSON.parse(await consulCall(admin(), 'GET', '/v1/agent/self')).DebugConfig.SerfPortLAN,
    )
    const joining = async (node: string, key: string | undefined) => {
      const home = join(root, node)
      mkdirSync(home, { recursive: true })
      const args = [
        `-node=${node}`,
        `-data-dir=${join(home, 'data')}`,
        '-bind=127.0.0.1',
        '-client=127.0.0.1',
        '-http-port=-1',
        '-dns-port=-1',
        '-grpc-port=-1',
        `-serf-lan-port=${await freePort()}`,
        '-serf-wan-port=-1',
        `-retry-join=127.0.0.1:${serfLan}`,
        '-retry-interval=1s',
        '-log-level=info',
        ...(key ? [`-encrypt=${key}`] : []),
      ]
      const logFile = join(home, 'consul.log')
      extraAgents.push(
        startConsulAgent(layoutFromEnv(), { args, logFile, cwd: home, pidFile: new PidFile(home) }),
      )
      return logFile
    }
    const members = async () =>
      (JSON.parse(await consulCall(admin(), 'GET', '/v1/agent/members')) as { Name: string }[]).map(
        (m) => m.Name,
      )

    const keylessLog = await joining('keyless', undefined)
    await joining('keyed', consul.gossipKey())
    await eventually('the keyed agent among the members', async () =>
      (await members()).includes('keyed') ? true : undefined,
    )
    await eventually('the keyless agent failing to join', async () =>
      /Join cluster failed/i.test(readFileSync(keylessLog, 'utf8')) ? true : undefined,
    )
    expect(await members()).not.toContain('keyless')
  })

  it('when it is started again in its folder with one service more, then the tokens it had still work and the new one too', async () => {
    const orderBefore = consul.envFor('order')
    await consul.stop()
    await expect(consulRequest(as('order'), 'GET', '/v1/status/leader')).rejects.toThrow()
    consul = await startSecureConsul({
      ...startOptions,
      principals: [...startOptions.principals, 'shipping'],
    })
    expect(consul.envFor('order')).toEqual(orderBefore)
    expect((await register(as('order'), 'order')).status).toBe(200)
    expect((await register(as('shipping'), 'shipping')).status).toBe(200)
    expect((await register(as('shipping'), 'order')).status).toBe(403)
  })
})
