// The Redis users made from the services' declared access, and infra's reading of the Redis TLS variables: no engine.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { redisAccess, redisServices } from '@meridian/contracts'
import { afterAll, describe, expect, it } from 'vitest'
import { repoRoot } from '../src/layout.ts'
import { passwordHashRule, redisAclLines, redisAclRules, redisAclTemplate } from '../src/secure/redis-acl.ts'
import { redisTlsFromEnv } from '../src/secure/redis-tls.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-redis-acl-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("the services' Redis users", () => {
  it("when a service only follows auth, then its user writes its own keys, reads auth's, and only subscribes to auth's channels", () => {
    expect(redisAclRules(redisAccess().order).join(' ')).toBe(
      'resetkeys ~order:* %R~session:* %R~auth:credentials-revoked:* resetchannels +@all -@dangerous +info -@scripting +eval +evalsha (&auth:credential-revocations &auth:sessions-ended +subscribe)',
    )
  })

  it('when the service is auth, then it owns the sessions, the revocations and their channels, with no selector', () => {
    expect(redisAclRules(redisAccess().auth).join(' ')).toBe(
      'resetkeys ~auth:* ~session:* resetchannels &auth:credential-revocations &auth:sessions-ended +@all -@dangerous +info -@scripting +eval +evalsha',
    )
  })

  it('when realtime and content are given prefixes of their own, then their users follow them', () => {
    const access = redisAccess({ realtime: 'run-7:realtime:', contentPubsub: 'run-7:content:' })
    expect(access['realtime-gateway'].keys).toEqual(['realtime-gateway:*', 'run-7:realtime:*'])
    expect(access['realtime-gateway'].channels).toEqual(['run-7:realtime:*'])
    expect(access.content.channels).toEqual(['run-7:content:*'])
    // the gateway follows revocations but reads no cookie session (the services behind it do)
    expect(access.gateway.readKeys).toEqual(['auth:credentials-revoked:*'])
  })

  it("when a prefix would reach another service's names or holds rule syntax, then it is refused", () => {
    expect(() => redisAccess({ realtime: 'auth:' })).toThrow(/would reach names under 'auth:'/)
    expect(() => redisAccess({ realtime: 'session:x:' })).toThrow(/would reach names under 'session:'/)
    expect(() => redisAccess({ realtime: 'meridian:' })).toThrow(
      /would reach names under 'meridian:content:'/,
    )
    expect(() => redisAccess({ contentPubsub: 'order:' })).toThrow(/would reach names under 'order:'/)
    expect(() => redisAccess({ realtime: 'x ~* +@all' })).toThrow(/must match/)
    expect(() => redisAccess({ contentPubsub: 'x*' })).toThrow(/must match/)
    expect(() => redisAccess({ contentPubsub: '' })).toThrow(/must match/)
    expect(() =>
      redisAclRules({ keys: ['order:*) (+@all ~*'], readKeys: [], channels: [], subscribeChannels: [] }),
    ).toThrow(/must match/)
  })

  it('when the users are written, then the default user is off, passwords appear only as hashes, and an undeclared service is refused', () => {
    const lines = redisAclLines({
      passwordRule: (user) => passwordHashRule(`${user}-secret`),
      services: ['order'],
    })
    expect(lines[0]).toBe('user default off resetpass resetkeys resetchannels -@all')
    expect(lines[1]).toBe(`user admin on ${passwordHashRule('admin-secret')} ~* &* +@all`)
    expect(lines[2]).toMatch(/^user order on #[0-9a-f]{64} resetkeys ~order:\* /)
    expect(lines.join('\n')).not.toContain('order-secret')
    expect(() => redisAclLines({ passwordRule: () => '>x', services: ['bench'] })).toThrow(
      /no Redis access is declared for 'bench'/,
    )
  })

  it('when docs/how-to/deploying.md shows the users, then they are the ones the declaration makes', () => {
    const deploying = readFileSync(join(repoRoot, 'docs', 'how-to', 'deploying.md'), 'utf8')
    for (const line of redisAclTemplate(redisServices)) expect(deploying).toContain(line)
  })
})

describe("infra's Redis TLS from the services' variables", () => {
  const ca = join(dir, 'ca.pem')
  const notPem = join(dir, 'not.pem')
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
  writeFileSync(notPem, 'hello\n')

  it('when the URL is rediss://, then TLS is on, with the CA read and the host as server name unless an address', () => {
    expect(redisTlsFromEnv('rediss://order:p@redis.example:6380', { REDIS_TLS_CA: ca })).toEqual({
      servername: 'redis.example',
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
    })
    expect(redisTlsFromEnv('rediss://127.0.0.1:6380', {})).toEqual({})
    expect(redisTlsFromEnv('rediss://[::1]:6380', {})).toEqual({})
    expect(redisTlsFromEnv('redis://127.0.0.1:6379', {})).toBeUndefined()
  })

  it('when a file is given for redis://, half a client certificate, or a file that is missing or not PEM, then it throws naming the variable', () => {
    expect(() => redisTlsFromEnv('redis://127.0.0.1:6379', { REDIS_TLS_CA: ca })).toThrow(
      /REDIS_TLS_CA given, but REDIS_URL is not rediss:\/\//,
    )
    expect(() => redisTlsFromEnv('rediss://127.0.0.1:6380', { REDIS_TLS_CERT: ca })).toThrow(
      /REDIS_TLS_CERT and REDIS_TLS_KEY: give both/,
    )
    expect(() =>
      redisTlsFromEnv('rediss://127.0.0.1:6380', { REDIS_TLS_CA: join(dir, 'missing.pem') }),
    ).toThrow(/REDIS_TLS_CA: cannot use '.*missing\.pem' \(ENOENT\)/)
    expect(() => redisTlsFromEnv('rediss://127.0.0.1:6380', { REDIS_TLS_CA: notPem })).toThrow(
      /REDIS_TLS_CA: cannot use '.*not\.pem' \(no PEM in it\)/,
    )
  })
})
