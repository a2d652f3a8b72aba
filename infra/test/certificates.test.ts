import { X509Certificate } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, createServer, type TLSSocket } from 'node:tls'
import { afterAll, describe, expect, it } from 'vitest'
import { certificateAuthority, subjectAltNames } from '../src/secure/certificates.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-ca-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A TLS server on loopback with this certificate, asking for client certificates signed by `ca` when `mutual`. */
async function tlsServer(cert: { certFile: string; keyFile: string }, ca: string, mutual: boolean) {
  const server = createServer(
    {
      cert: readFileSync(cert.certFile),
      key: readFileSync(cert.keyFile),
      ca,
      requestCert: mutual,
      rejectUnauthorized: mutual,
    },
    (socket) => socket.end('hello'),
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, port: (server.address() as AddressInfo).port }
}

/** What a client trusting `ca` gets from the server: its greeting, or the TLS error. */
async function greeting(
  port: number,
  options: { ca: string; servername?: string; cert?: { certFile: string; keyFile: string } },
): Promise<string> {
  const socket: TLSSocket = connect({
    host: '127.0.0.1',
    port,
    ca: options.ca,
    ...(options.servername ? { servername: options.servername } : {}),
    ...(options.cert
      ? { cert: readFileSync(options.cert.certFile), key: readFileSync(options.cert.keyFile) }
      : {}),
  })
  return new Promise((resolve) => {
    let text = ''
    socket.on('data', (chunk) => {
      text += chunk.toString()
    })
    socket.on('end', () => resolve(text))
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`error: ${error.code ?? error.message}`))
  })
}

describe('the certificate authority made for a run of secure engines', () => {
  it('issues a server certificate that a client trusting only the CA accepts at its address, and nowhere else', async () => {
    const ca = await certificateAuthority(join(dir, 'ca'))
    const cert = await ca.server('kafka', ['127.0.0.1', 'localhost'])
    expect(statSync(cert.keyFile).mode & 0o077).toBe(0)
    const { server, port } = await tlsServer(cert, ca.caPem(), false)
    try {
      expect(await greeting(port, { ca: ca.caPem() })).toBe('hello')
      expect(await greeting(port, { ca: ca.caPem(), servername: 'localhost' })).toBe('hello')
      // another name than the certificate's: refused (what verify-full means)
      expect(await greeting(port, { ca: ca.caPem(), servername: 'postgres.example' })).toBe(
        'error: ERR_TLS_CERT_ALTNAME_INVALID',
      )
      // another CA: refused
      const other = await certificateAuthority(join(dir, 'other'))
      expect(await greeting(port, { ca: other.caPem() })).toMatch(/^error: /)
    } finally {
      server.close()
    }
  })

  it('issues client certificates the server verifies against the CA (mutual TLS), and refuses a stranger', async () => {
    const ca = await certificateAuthority(join(dir, 'ca'))
    const serverCert = await ca.server('redis', ['127.0.0.1'])
    const clientCert = await ca.client('order')
    const stranger = await (await certificateAuthority(join(dir, 'stranger'))).client('order')
    const { server, port } = await tlsServer(serverCert, ca.caPem(), true)
    try {
      expect(await greeting(port, { ca: ca.caPem(), cert: clientCert })).toBe('hello')
      expect(await greeting(port, { ca: ca.caPem(), cert: stranger })).toMatch(/^(error: |$)/)
      expect(await greeting(port, { ca: ca.caPem() })).toMatch(/^(error: |$)/)
    } finally {
      server.close()
    }
  })

  it('keeps what it issued: the same name and hosts reuse the files, other hosts issue anew', async () => {
    const ca = await certificateAuthority(join(dir, 'ca'))
    const first = await ca.server('consul', ['127.0.0.1'])
    const before = readFileSync(first.certFile, 'utf8')
    expect(readFileSync((await ca.server('consul', ['127.0.0.1'])).certFile, 'utf8')).toBe(before)
    expect(readFileSync((await ca.server('consul', ['127.0.0.1', '198.18.0.2'])).certFile, 'utf8')).not.toBe(
      before,
    )
    // the same CA when asked again for its folder
    expect((await certificateAuthority(join(dir, 'ca'))).caPem()).toBe(ca.caPem())
  })

  it('when many certificates are issued at once, as the engines of a secure run are, then each is issued with a serial of its own', async () => {
    const ca = await certificateAuthority(join(dir, 'ca-at-once'))
    const names = Array.from({ length: 8 }, (_, i) => `engine-${i}`)
    const issued = await Promise.all(names.map((name) => ca.server(name, ['127.0.0.1'])))
    const serials = issued.map(({ certFile }) => new X509Certificate(readFileSync(certFile)).serialNumber)
    expect(new Set(serials).size).toBe(names.length)
    for (const { certFile } of issued)
      expect(
        new X509Certificate(readFileSync(certFile)).verify(new X509Certificate(ca.caPem()).publicKey),
      ).toBe(true)
  })

  it('refuses names that would reach openssl as options or paths', async () => {
    const ca = await certificateAuthority(join(dir, 'ca'))
    await expect(ca.client('../escape')).rejects.toThrow(/must match/)
    await expect(ca.server('x', ['bad host;'])).rejects.toThrow(/neither an address nor a host name/)
    expect(() => subjectAltNames([])).toThrow(/at least one host/)
    expect(subjectAltNames(['127.0.0.1', '::1', 'localhost'])).toBe('IP:127.0.0.1,IP:::1,DNS:localhost')
  })
})
