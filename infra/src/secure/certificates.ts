// A certificate authority made for a run of secure engines (`scripts/infra up --secure`, the secure cluster, the tests of
// each engine's TLS and credentials): the CA, a server certificate per engine for the addresses it is reached at, and
// client certificates for mutual TLS. OpenSSL's command line does the cryptography (Debian's openssl, which the
// preparation installs): no hand-written X.509.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { join } from 'node:path'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { which } from '../native/engine.ts'
import { run } from '../processes.ts'

/** A certificate and its private key (PKCS#8, unencrypted, readable by its owner only), as files. */
export interface IssuedCertificate {
  certFile: string
  keyFile: string
}

export interface CertificateAuthority {
  /** the folder holding the CA and everything it issued */
  readonly dir: string
  /** the CA's certificate (PEM): what every client and server is told to trust */
  readonly caFile: string
  /** the CA's certificate as text */
  caPem(): string
  /**
   * A server certificate for `name` valid for `hosts` (IP addresses and DNS names, in the subject alternative names):
   * issued once per name and set of hosts, then reused.
   */
  server(name: string, hosts: readonly string[]): Promise<IssuedCertificate>
  /** A client certificate whose common name is `name` (mutual TLS: Kafka's mTLS principal, Redis' tls-auth-clients). */
  client(name: string): Promise<IssuedCertificate>
}

/** Valid long enough for any run or development machine, short enough that nobody mistakes it for a real one. */
const validityDays = 825
/** Names of files and common names: letters, digits, dots, dashes and underscores only (they reach openssl's -subj). */
const namePattern = /^[A-Za-z0-9._-]{1,64}$/

function assertName(name: string): void {
  if (!namePattern.test(name)) throw new Error(`certificate name '${name}' must match ${namePattern}`)
}

/** The subjectAltName extension's value for these hosts: `IP:` for addresses, `DNS:` for names. */
export function subjectAltNames(hosts: readonly string[]): string {
  if (hosts.length === 0) throw new Error('a server certificate needs at least one host')
  return hosts
    .map((host) => {
      if (isIP(host)) return `IP:${host}`
      if (!/^[A-Za-z0-9.-]{1,253}$/.test(host))
        throw new Error(`'${host}' is neither an address nor a host name`)
      return `DNS:${host}`
    })
    .join(',')
}

async function openssl(args: string[]): Promise<string> {
  if (!which('openssl')) throw new MissingPrerequisite("Debian's openssl", 'installs it with apt-get')
  return run('openssl', args)
}

/** An EC P-256 key in PKCS#8 (what Kafka's PEM key store, PostgreSQL, Redis and Consul all read), mode 0600. */
async function newKey(file: string): Promise<void> {
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file])
  writeFileSync(file, readFileSync(file), { mode: 0o600 })
}

/**
 * The CA kept in `dir` (made there when missing; `dir` is a run's or an engine's own folder, never shared with
 * another CA). Files are written under a temporary name and renamed, so a CA interrupted half-way is made again.
 */
export async function certificateAuthority(dir: string): Promise<CertificateAuthority> {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const caFile = join(dir, 'ca.pem')
  const caKeyFile = join(dir, 'ca-key.pem')
  if (!existsSync(caFile) || !existsSync(caKeyFile)) {
    const partialKey = `${caKeyFile}.partial`
    await newKey(partialKey)
    await openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      partialKey,
      '-sha256',
      '-days',
      String(validityDays),
      '-subj',
      '/O=Meridian/CN=Meridian engines CA (made for this run)',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      `${caFile}.partial`,
    ])
    renameSync(partialKey, caKeyFile)
    renameSync(`${caFile}.partial`, caFile)
  }

  /** Issues `<name>.pem` and `<name>-key.pem` with these extensions, unless the same were issued already. */
  async function issue(name: string, extensions: string[], fingerprint: string): Promise<IssuedCertificate> {
    assertName(name)
    const certFile = join(dir, `${name}.pem`)
    const keyFile = join(dir, `${name}-key.pem`)
    const stampFile = join(dir, `${name}.issued`)
    if (
      existsSync(certFile) &&
      existsSync(keyFile) &&
      existsSync(stampFile) &&
      readFileSync(stampFile, 'utf8') === fingerprint
    ) {
      return { certFile, keyFile }
    }
    rmSync(stampFile, { force: true })
    const requestFile = join(dir, `${name}.csr`)
    const extensionsFile = join(dir, `${name}.ext`)
    await newKey(keyFile)
    await openssl(['req', '-new', '-key', keyFile, '-subj', `/O=Meridian/CN=${name}`, '-out', requestFile])
    writeFileSync(extensionsFile, `${extensions.join('\n')}\n`)
    try {
      await openssl([
        'x509',
        '-req',
        '-in',
        requestFile,
        '-CA',
        caFile,
        '-CAkey',
        caKeyFile,
        // a random serial of its own (RFC 5280: positive, at most 20 octets), not -CAcreateserial's shared ca.srl,
        // which certificates issued at once read while another writes it ("Unable to load number from ca.srl")
        '-set_serial',
        `0x${randomBytes(16)
          .toString('hex')
          .replace(/^./, (digit) => (Number.parseInt(digit, 16) & 7).toString(16))}`,
        '-sha256',
        '-days',
        String(validityDays),
        '-extfile',
        extensionsFile,
        '-out',
        certFile,
      ])
    } finally {
      rmSync(requestFile, { force: true })
      rmSync(extensionsFile, { force: true })
    }
    writeFileSync(stampFile, fingerprint)
    return { certFile, keyFile }
  }

  return {
    dir,
    caFile,
    caPem: () => readFileSync(caFile, 'utf8'),
    async server(name, hosts) {
      const names = subjectAltNames(hosts)
      return issue(
        name,
        [
          'basicConstraints=critical,CA:FALSE',
          'keyUsage=critical,digitalSignature,keyEncipherment',
          // serverAuth and clientAuth: a Consul server and Kafka's brokers also connect to each other with it
          'extendedKeyUsage=serverAuth,clientAuth',
          `subjectAltName=${names}`,
        ],
        `server ${names}`,
      )
    },
    async client(name) {
      return issue(
        name,
        [
          'basicConstraints=critical,CA:FALSE',
          'keyUsage=critical,digitalSignature',
          'extendedKeyUsage=clientAuth',
        ],
        'client',
      )
    },
  }
}
