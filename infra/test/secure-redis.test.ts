// The secure Redis on the real redis-server: TLS only, the default user off, and each service's user limited to the
// keys and channels declared for it (redisAccess), connected as the services and the test kit connect (REDIS_URL
// rediss://…, REDIS_TLS_CA).
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { connect as connectTcp } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ConnectionOptions, connect as connectTls } from 'node:tls'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/free-port.ts'
import { type CertificateAuthority, certificateAuthority } from '../src/secure/certificates.ts'
import type { SecureEngineInstance } from '../src/secure/engine.ts'
import { startSecureRedis } from '../src/secure/redis.ts'
import { redisTlsFromEnv } from '../src/secure/redis-tls.ts'
import { eventually } from './eventually.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-secure-redis-'))
const host = '127.0.0.1'
let ca: CertificateAuthority
let port: number
let redis: SecureEngineInstance
const clients: Redis[] = []

beforeAll(async () => {
  ca = await certificateAuthority(join(dir, 'ca'))
  port = await freePort()
  redis = await startSecureRedis({
    dir: join(dir, 'redis'),
    ca,
    host,
    ports: { redis: port },
    principals: ['auth', 'order', 'content'],
  })
})

afterAll(async () => {
  for (const client of clients) client.disconnect()
  await redis?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** A client as the test kit makes one from a service's variables (and `tls` beside them), no retries. */
function client(env: Record<string, string>, tls: ConnectionOptions = {}, url = env.REDIS_URL ?? ''): Redis {
  const connection = new Redis(url, {
    tls: { ...redisTlsFromEnv(url, env), ...tls },
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  connection.on('error', () => {})
  clients.push(connection)
  return connection
}

/** The error a command is answered with ('' when it succeeds). */
async function refusal(command: Promise<unknown>): Promise<string> {
  try {
    await command
    return ''
  } catch (error) {
    return (error as Error).message
  }
}

/** What a client trusting `options` gets from the TLS port before anything is sent: 'connected' or the TLS error. */
async function handshake(options: ConnectionOptions): Promise<string> {
  const socket = connectTls({ host, port, ...options })
  const outcome = await new Promise<string>((resolve) => {
    socket.once('secureConnect', () => resolve('connected'))
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(`error: ${error.code ?? error.message}`))
  })
  socket.destroy()
  return outcome
}

describe('a secure Redis with a user per service', () => {
  it("when order's user connects with its variables, then it reads and writes its own keys, and reads auth's sessions and revocations without writing them", async () => {
    const order = client(redis.envFor('order'))
    await order.set('order:rate-limit:probe', '1', 'PX', 60_000)
    expect(await order.get('order:rate-limit:probe')).toBe('1')
    expect(await order.eval("return redis.call('INCR', KEYS[1])", 1, 'order:rate-limit:probe')).toBe(2)

    const auth = client(redis.envFor('auth'))
    await auth.set('session:probe', '{"userId":"u"}', 'PX', 60_000)
    await auth.set('auth:credentials-revoked:u', '{"userId":"u"}', 'PX', 60_000)
    expect(await order.get('session:probe')).toBe('{"userId":"u"}')
    expect(await order.pttl('session:probe')).toBeGreaterThan(0)
    expect(await order.mget('auth:credentials-revoked:u')).toEqual(['{"userId":"u"}'])
    expect(await refusal(order.del('session:probe'))).toMatch(/^NOPERM/)
    expect(await refusal(order.set('auth:credentials-revoked:u', 'forged'))).toMatch(/^NOPERM/)
  })

  it("when order's user touches another service's keys, directly or inside a script, then Redis answers NOPERM", async () => {
    const order = client(redis.envFor('order'))
    expect(await refusal(order.get('auth:login-failures:address:192.0.2.1'))).toMatch(/^NOPERM/)
    expect(await refusal(order.set('content:rate-limit:x', '1'))).toMatch(/^NOPERM/)
    expect(await refusal(order.get('meridian:realtime:stream'))).toMatch(/^NOPERM/)
    // a key the script computes for itself is checked as well as those it is given
    expect(
      await refusal(order.eval("return redis.call('GET', 'auth:user-sessions:' .. ARGV[1])", 0, 'u')),
    ).toMatch(/^ERR The user executing the script can't access at least one of the keys/)
  })

  it('when a service runs a command outside its rules, then Redis answers NOPERM', async () => {
    const order = client(redis.envFor('order'))
    for (const command of [
      ['FLUSHALL'],
      ['FLUSHDB'],
      ['KEYS', '*'],
      ['CONFIG', 'GET', 'port'],
      ['CLIENT', 'LIST'],
      ['SCRIPT', 'FLUSH'],
      ['FUNCTION', 'FLUSH'],
      ['ACL', 'LIST'],
      ['SHUTDOWN'],
      ['MONITOR'],
    ] as const) {
      const [name, ...args] = command
      expect(await refusal(order.call(name, ...args)), command.join(' ')).toMatch(/^NOPERM/)
    }
    // DEBUG is off in the server for everyone (enable-debug-command no), before the user's rules are asked
    expect(await refusal(order.call('DEBUG', 'SLEEP', '0'))).toMatch(/^ERR DEBUG command not allowed/)
    // what the services do run: their connection's name, PING, SCAN (the revocations' reload)
    await order.client('SETNAME', 'order-probe')
    expect(await order.client('GETNAME')).toBe('order-probe')
    expect(await order.ping()).toBe('PONG')
    expect((await order.scan('0', 'MATCH', 'auth:credentials-revoked:*', 'COUNT', 10))[0]).toMatch(/^\d+$/)
  })

  it("when order subscribes to auth's announcements, then it hears auth's, and publishing on them itself is refused", async () => {
    const order = client(redis.envFor('order'))
    const follower = order.duplicate()
    follower.on('error', () => {})
    clients.push(follower)
    const heard: string[] = []
    follower.on('message', (channel: string, message: string) => heard.push(`${channel} ${message}`))
    await follower.subscribe('auth:credential-revocations', 'auth:sessions-ended')

    const auth = client(redis.envFor('auth'))
    expect(await auth.publish('auth:credential-revocations', 'from auth')).toBe(1)
    await eventually('order hears auth', async () =>
      heard.includes('auth:credential-revocations from auth') ? true : undefined,
    )
    expect(await refusal(order.publish('auth:credential-revocations', 'forged'))).toMatch(/^NOPERM/)
    expect(await refusal(order.publish('auth:sessions-ended', 'forged'))).toMatch(/^NOPERM/)
    // nor may it listen to channels it does not follow
    const stranger = order.duplicate()
    stranger.on('error', () => {})
    clients.push(stranger)
    expect(await refusal(stranger.subscribe('meridian:content:post.created'))).toMatch(/^NOPERM/)
  })

  it("when content publishes on its channels, then its subscribers hear it, and order's user may neither", async () => {
    const content = client(redis.envFor('content'))
    const subscriber = content.duplicate()
    subscriber.on('error', () => {})
    clients.push(subscriber)
    await subscriber.subscribe('meridian:content:post.created')
    const heard = once(subscriber, 'message')
    expect(await content.publish('meridian:content:post.created', 'a post')).toBe(1)
    expect((await heard)[1]).toBe('a post')
    expect(await refusal(content.publish('other:channel', 'x'))).toMatch(/^NOPERM/)
    expect(
      await refusal(client(redis.envFor('order')).publish('meridian:content:post.created', 'x')),
    ).toMatch(/^NOPERM/)
  })

  it('when the password is wrong, or no user is named, then Redis refuses: WRONGPASS, and NOAUTH for the default user', async () => {
    const anonymous = client({ REDIS_TLS_CA: ca.caFile }, {}, `rediss://${host}:${port}`)
    expect(await refusal(anonymous.ping())).toMatch(/^NOAUTH/)
    expect(await refusal(anonymous.get('order:x'))).toMatch(/^NOAUTH/)
    expect(await refusal(anonymous.call('AUTH', 'order', 'not-its-password'))).toMatch(/^WRONGPASS/)
    // the default user is off: no password opens it
    expect(await refusal(anonymous.call('AUTH', 'default', ''))).toMatch(/^WRONGPASS/)
    expect(await refusal(anonymous.call('AUTH', 'nobody', 'x'))).toMatch(/^WRONGPASS/)
    const wrong = new URL(redis.envFor('order').REDIS_URL ?? '')
    wrong.password = 'not-its-password'
    const misconfigured = client({ REDIS_TLS_CA: ca.caFile }, {}, wrong.href)
    expect(await refusal(misconfigured.ping())).toMatch(/^(NOAUTH|WRONGPASS)/)
  })

  it('when a client speaks plaintext, then nothing answers it: the only port is the TLS one', async () => {
    const admin = client(redis.adminEnv())
    expect(await admin.call('CONFIG', 'GET', 'port')).toEqual(['port', '0'])
    expect(await admin.call('CONFIG', 'GET', 'tls-port')).toEqual(['tls-port', String(port)])
    const socket = connectTcp({ host, port })
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1')
    })
    // the server takes the bytes for a TLS handshake that fails, and closes (or resets) the connection
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => {})
    socket.once('connect', () => socket.write('PING\r\n'))
    await closed
    expect(answer).not.toContain('PONG')
  })

  it('when a client does not trust the CA, then the handshake fails; with the CA it succeeds', async () => {
    const other = await certificateAuthority(join(dir, 'other-ca'))
    expect(await handshake({ ca: ca.caPem() })).toBe('connected')
    expect(await handshake({ ca: other.caPem() })).toMatch(/^error: /)
    expect(await handshake({})).toMatch(/^error: /)
  })

  it("when a client sends a certificate of the CA (mutual TLS), then it works with its user's password; one of another CA is refused", async () => {
    const own = await ca.client('order')
    const mutual = client(redis.envFor('order'), {
      cert: readFileSync(own.certFile, 'utf8'),
      key: readFileSync(own.keyFile, 'utf8'),
    })
    expect(await mutual.ping()).toBe('PONG')
    expect(await mutual.set('order:mtls', '1')).toBe('OK')

    const stranger = await (await certificateAuthority(join(dir, 'stranger-ca'))).client('order')
    const refused = client(redis.envFor('order'), {
      cert: readFileSync(stranger.certFile, 'utf8'),
      key: readFileSync(stranger.keyFile, 'utf8'),
    })
    expect(await refusal(refused.ping())).not.toBe('')
  })

  it('when the instance is made, then its secrets are readable by its owner only and written nowhere else', async () => {
    const instanceDir = join(dir, 'redis')
    const credentials = JSON.parse(readFileSync(join(instanceDir, 'credentials.json'), 'utf8')) as Record<
      string,
      string
    >
    expect(Object.keys(credentials).sort()).toEqual(['admin', 'auth', 'content', 'order'])
    for (const file of ['credentials.json', 'users.acl']) {
      expect(statSync(join(instanceDir, file)).mode & 0o077, file).toBe(0)
    }
    const acl = readFileSync(join(instanceDir, 'users.acl'), 'utf8')
    const log = readFileSync(redis.logFile, 'utf8')
    for (const password of Object.values(credentials)) {
      expect(acl).not.toContain(password)
      expect(log).not.toContain(password)
    }
    expect(acl).toMatch(/^user default off /m)
    expect(() => redis.envFor('payment')).toThrow(/not one of its principals/)
    expect(() => redis.envFor('admin')).toThrow(/not one of its principals/)
    expect(redis.envFor('order')).toEqual({
      REDIS_URL: `rediss://order:${credentials.order}@${host}:${port}`,
      REDIS_TLS_CA: ca.caFile,
    })
  })

  it('when a principal has no declared access, or the instance already runs, then nothing is started', async () => {
    const options = { ca, host, ports: { redis: await freePort() } }
    await expect(
      startSecureRedis({ ...options, dir: join(dir, 'undeclared'), principals: ['order', 'bench tool'] }),
    ).rejects.toThrow(/no Redis access is declared for 'bench tool'/)
    await expect(
      startSecureRedis({ ...options, dir: join(dir, 'redis'), principals: ['order'] }),
    ).rejects.toThrow(/already runs/)
  })
})
