// TLS of infra's own Redis connections (the probes, provisioning) and of the test kit's, from the variables the
// services read through service-kit's createRedis: REDIS_URL rediss://user:password@host:port, REDIS_TLS_CA,
// REDIS_TLS_CERT and REDIS_TLS_KEY (paths of PEM files). The same rules: TLS for rediss:// only, the server checked
// at the URL's host, a file that cannot be read named by its variable.
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'

const variables = ['REDIS_TLS_CA', 'REDIS_TLS_CERT', 'REDIS_TLS_KEY'] as const

function pem(variable: string, path: string): string {
  try {
    const text = readFileSync(path, 'utf8')
    if (!text.includes('-----BEGIN ')) throw new Error('no PEM in it')
    return text
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new Error(`${variable}: cannot use '${path}' (${reason})`)
  }
}

/** ioredis' `tls` for `url` and the environment's REDIS_TLS_* files; undefined for redis://. */
export function redisTlsFromEnv(url: string, env: NodeJS.ProcessEnv): ConnectionOptions | undefined {
  const given = variables.filter((name) => env[name])
  if (!url.startsWith('rediss://')) {
    if (given.length > 0) throw new Error(`${given.join(', ')} given, but REDIS_URL is not rediss:// (TLS)`)
    return undefined
  }
  if (Boolean(env.REDIS_TLS_CERT) !== Boolean(env.REDIS_TLS_KEY)) {
    throw new Error(
      'REDIS_TLS_CERT and REDIS_TLS_KEY: give both (a client certificate and its key) or neither',
    )
  }
  const hostname = new URL(url).hostname
  // an IPv6 address comes in brackets; an address is never a server name (RFC 6066)
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
  return {
    ...(host !== '' && isIP(host) === 0 ? { servername: host } : {}),
    ...(env.REDIS_TLS_CA ? { ca: pem('REDIS_TLS_CA', env.REDIS_TLS_CA) } : {}),
    ...(env.REDIS_TLS_CERT && env.REDIS_TLS_KEY
      ? { cert: pem('REDIS_TLS_CERT', env.REDIS_TLS_CERT), key: pem('REDIS_TLS_KEY', env.REDIS_TLS_KEY) }
      : {}),
  }
}
