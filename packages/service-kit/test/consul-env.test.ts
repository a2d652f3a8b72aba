// Consul's variables as the kit reads them (no engine): the TLS files read once, every bad one named at start.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, serviceEnv } from '../src/config.ts'
import { createConsulClient } from '../src/registry/consul-client.ts'
import { type ConsulEnv, consulOptionsFromEnv } from '../src/registry/consul-env.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-consul-env-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const pem = (label: string) => `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const caFile = file('ca.pem', pem('CERTIFICATE'))
const certFile = file('client.pem', pem('CERTIFICATE'))
const keyFile = file('client-key.pem', pem('PRIVATE KEY'))

/** The problems of a ConfigError thrown by `read`, or fails. */
function problemsOf(read: () => unknown): string[] {
  try {
    read()
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  throw new Error('no ConfigError was thrown')
}

describe("the kit's Consul settings from the environment", () => {
  it('when only the address and a token are set (development), then plain HTTP with the token, no TLS', () => {
    expect(
      consulOptionsFromEnv({ CONSUL_HTTP_ADDR: 'http://127.0.0.1:8500', CONSUL_HTTP_TOKEN: 't' }),
    ).toEqual({
      address: 'http://127.0.0.1:8500',
      token: 't',
    })
  })

  it('when the CA and a client certificate are given, then their contents are the TLS settings, read once per configuration', () => {
    const env: ConsulEnv = {
      CONSUL_HTTP_ADDR: 'https://127.0.0.1:8501',
      CONSUL_CACERT: caFile,
      CONSUL_CLIENT_CERT: certFile,
      CONSUL_CLIENT_KEY: keyFile,
    }
    const options = consulOptionsFromEnv(env)
    expect(options).toEqual({
      address: 'https://127.0.0.1:8501',
      tls: { ca: pem('CERTIFICATE'), cert: pem('CERTIFICATE'), key: pem('PRIVATE KEY') },
    })
    // the files are not read again for the same configuration: the settings are the very same object
    expect(consulOptionsFromEnv(env)).toBe(options)
  })

  it('when a file is missing, a folder, empty or not PEM, then one error names each variable and path, never the contents', () => {
    const folder = join(dir, 'a-folder')
    mkdirSync(folder)
    const notPem = file('secret.txt', 'my-private-key-material')
    const problems = problemsOf(() =>
      consulOptionsFromEnv({
        CONSUL_HTTP_ADDR: 'https://127.0.0.1:8501',
        CONSUL_CACERT: join(dir, 'missing.pem'),
        CONSUL_CLIENT_CERT: folder,
        CONSUL_CLIENT_KEY: notPem,
      }),
    )
    expect(problems).toEqual([
      `CONSUL_CACERT: cannot read '${join(dir, 'missing.pem')}' (ENOENT)`,
      `CONSUL_CLIENT_CERT: cannot read '${folder}' (EISDIR)`,
      `CONSUL_CLIENT_KEY: '${notPem}' holds no PEM block (-----BEGIN …-----)`,
    ])
    expect(problems.join('\n')).not.toContain('my-private-key-material')
    expect(
      problemsOf(() =>
        consulOptionsFromEnv({ CONSUL_HTTP_ADDR: 'https://h:1', CONSUL_CACERT: file('empty.pem', '') }),
      ),
    ).toEqual([`CONSUL_CACERT: '${join(dir, 'empty.pem')}' holds no PEM block (-----BEGIN …-----)`])
  })

  it('when a file is unreadable to the process, then the error says so', () => {
    // root reads any file whatever its mode: only a process that is not root can see this refusal
    if (process.getuid?.() === 0) return
    const locked = file('locked.pem', pem('CERTIFICATE'))
    chmodSync(locked, 0)
    expect(
      problemsOf(() => consulOptionsFromEnv({ CONSUL_HTTP_ADDR: 'https://h:1', CONSUL_CACERT: locked })),
    ).toEqual([`CONSUL_CACERT: cannot read '${locked}' (EACCES)`])
  })

  it('when a client certificate comes without its key (or a key without it), then both variables are named', () => {
    for (const half of [{ CONSUL_CLIENT_CERT: certFile }, { CONSUL_CLIENT_KEY: keyFile }]) {
      expect(
        problemsOf(() => consulOptionsFromEnv({ CONSUL_HTTP_ADDR: 'https://127.0.0.1:8501', ...half })),
      ).toEqual([
        'CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY: set both (a client certificate and its key) or neither',
      ])
    }
  })

  it('when TLS files are given beside a plain-HTTP address, then the address is named (TLS would silently not be used)', () => {
    for (const address of ['http://127.0.0.1:8500', '127.0.0.1:8500']) {
      expect(
        problemsOf(() => consulOptionsFromEnv({ CONSUL_HTTP_ADDR: address, CONSUL_CACERT: caFile })),
      ).toEqual([
        'CONSUL_HTTP_ADDR: must be an https:// address when CONSUL_CACERT, CONSUL_CLIENT_CERT or CONSUL_CLIENT_KEY is set',
      ])
    }
  })

  it('when the client is made by hand with TLS for plain HTTP, or half a client certificate, then it refuses', () => {
    expect(() =>
      createConsulClient({ address: 'http://127.0.0.1:8500', tls: { ca: pem('CERTIFICATE') } }),
    ).toThrow(/plain-HTTP address/)
    expect(() =>
      createConsulClient({ address: 'https://127.0.0.1:8501', tls: { cert: pem('CERTIFICATE') } }),
    ).toThrow(/needs its key/)
  })
})

describe("Consul's variables in every service's schema", () => {
  const schema = serviceEnv({})
  const base = {
    NODE_ENV: 'test',
    PORT: '3001',
    DATABASE_URL: 'postgres://u:p@h:5432/auth',
    REDIS_URL: 'redis://127.0.0.1:6379',
  }

  it('when the address is host:port, http:// or https:// (with a path), then it is accepted', () => {
    for (const address of [
      'consul.internal:8500',
      'http://127.0.0.1:8500',
      'HTTPS://[::1]:8501',
      'https://h:8501/consul',
    ]) {
      expect(loadConfig(schema, { ...base, CONSUL_HTTP_ADDR: address }).CONSUL_HTTP_ADDR).toBe(address)
    }
  })

  it('when the address has another scheme, white space or is over-long, or a file path is over-long, then each is named', () => {
    for (const address of [
      'ftp://consul:21',
      'unix:///var/run/consul.sock',
      'https://h :8501',
      `https://${'h'.repeat(2100)}`,
    ]) {
      expect(problemsOf(() => loadConfig(schema, { ...base, CONSUL_HTTP_ADDR: address }))).toEqual([
        `CONSUL_HTTP_ADDR: must be host:port, http://host:port or https://host:port (a path may follow) (got '${address}')`,
      ])
    }
    const problems = problemsOf(() =>
      loadConfig(schema, {
        ...base,
        CONSUL_CACERT: `/${'a'.repeat(5000)}`,
        CONSUL_CLIENT_KEY: `/${'k'.repeat(5000)}`,
      }),
    )
    expect(problems).toHaveLength(2)
    expect(problems[0]).toMatch(/^CONSUL_CACERT: /)
    // a variable named like a key never has its value shown
    expect(problems[1]).toMatch(/^CONSUL_CLIENT_KEY: /)
    expect(problems[1]).not.toContain('kkkk')
  })
})
