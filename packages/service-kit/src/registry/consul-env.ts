// The Consul client settings a service's configuration says: Consul's own variables (CONSUL_HTTP_ADDR,
// CONSUL_HTTP_TOKEN, CONSUL_CACERT, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY), the files read once per configuration.
// Every client built from configuration (registration, runtime settings, discovery, API keys at auth, the gateway's
// routing, realtime-gateway's dashboard) takes them from here.
import { ConfigError, type ServiceEnv } from '../config.ts'
import { readPemFiles } from '../pem-files.ts'
import type { ConsulClientOptions, ConsulTls } from './consul-client.ts'

export type ConsulEnv = Pick<
  ServiceEnv,
  'CONSUL_HTTP_ADDR' | 'CONSUL_HTTP_TOKEN' | 'CONSUL_CACERT' | 'CONSUL_CLIENT_CERT' | 'CONSUL_CLIENT_KEY'
>

/** One reading per configuration object: a service asks for its Consul settings in several places at start. */
const settingsOf = new WeakMap<ConsulEnv, ConsulClientOptions>()

/**
 * The address, the token and the TLS files' contents; a ConfigError naming every bad variable: a file missing,
 * unreadable or not PEM, a client certificate without its key (or a key without it), TLS files beside an address that
 * is not `https://`. `http://` with a token stays allowed (development).
 */
export function consulOptionsFromEnv(env: ConsulEnv): ConsulClientOptions {
  const known = settingsOf.get(env)
  if (known) return known
  const { pems, problems } = readPemFiles({
    CONSUL_CACERT: env.CONSUL_CACERT,
    CONSUL_CLIENT_CERT: env.CONSUL_CLIENT_CERT,
    CONSUL_CLIENT_KEY: env.CONSUL_CLIENT_KEY,
  })
  if (Boolean(env.CONSUL_CLIENT_CERT) !== Boolean(env.CONSUL_CLIENT_KEY)) {
    problems.push(
      'CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY: set both (a client certificate and its key) or neither',
    )
  }
  const tlsGiven = Boolean(env.CONSUL_CACERT || env.CONSUL_CLIENT_CERT || env.CONSUL_CLIENT_KEY)
  if (tlsGiven && !/^https:\/\//i.test(env.CONSUL_HTTP_ADDR)) {
    problems.push(
      'CONSUL_HTTP_ADDR: must be an https:// address when CONSUL_CACERT, CONSUL_CLIENT_CERT or CONSUL_CLIENT_KEY is set',
    )
  }
  if (problems.length > 0) throw new ConfigError(problems)
  const tls: ConsulTls = {
    ...(pems.CONSUL_CACERT !== undefined ? { ca: pems.CONSUL_CACERT } : {}),
    ...(pems.CONSUL_CLIENT_CERT !== undefined ? { cert: pems.CONSUL_CLIENT_CERT } : {}),
    ...(pems.CONSUL_CLIENT_KEY !== undefined ? { key: pems.CONSUL_CLIENT_KEY } : {}),
  }
  const options: ConsulClientOptions = Object.freeze({
    address: env.CONSUL_HTTP_ADDR,
    ...(env.CONSUL_HTTP_TOKEN ? { token: env.CONSUL_HTTP_TOKEN } : {}),
    ...(tlsGiven ? { tls: Object.freeze(tls) } : {}),
  })
  settingsOf.set(env, options)
  return options
}
