// Consul's HTTP API as infra's tools reach it (probes, the secure agent's provisioning, a system run's clean-up, API
// fuzzing): the address, token and TLS files of Consul's own variables, plain HTTP or HTTPS. Node's http/https rather
// than fetch: fetch takes no CA of its own without undici's Agent, which infra does not depend on.
import { readFileSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'

/** How a tool reaches Consul: CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, CONSUL_CACERT, CONSUL_CLIENT_CERT/KEY. */
export interface ConsulSettings {
  /** `https://host:port`, `http://host:port` or `host:port` (plain HTTP) */
  address: string
  token?: string
  /** the PEM file of the CA the agent's certificate is checked against (an https:// address; default: the system's) */
  caFile?: string
  /** a client certificate and its key (PEM files), for an agent that verifies HTTPS clients */
  certFile?: string
  keyFile?: string
}

/** `127.0.0.1:8500` -> `http://127.0.0.1:8500`; a trailing slash is dropped. */
export function consulBaseUrl(httpAddr: string): string {
  return (/^https?:\/\//.test(httpAddr) ? httpAddr : `http://${httpAddr}`).replace(/(^|[^/])\/+$/, '$1')
}

/** The settings Consul's variables in `env` say; `address` instead of CONSUL_HTTP_ADDR when given (a planned endpoint). */
export function consulSettingsFromEnv(env: NodeJS.ProcessEnv, address?: string): ConsulSettings {
  const httpAddr = address ?? env.CONSUL_HTTP_ADDR
  if (!httpAddr) throw new Error('CONSUL_HTTP_ADDR is not set')
  return {
    address: httpAddr,
    ...(env.CONSUL_HTTP_TOKEN ? { token: env.CONSUL_HTTP_TOKEN } : {}),
    ...(env.CONSUL_CACERT ? { caFile: env.CONSUL_CACERT } : {}),
    ...(env.CONSUL_CLIENT_CERT ? { certFile: env.CONSUL_CLIENT_CERT } : {}),
    ...(env.CONSUL_CLIENT_KEY ? { keyFile: env.CONSUL_CLIENT_KEY } : {}),
  }
}

/** Consul's variables for these settings: what a process started against the same agent is given. */
export function consulEnvOf(settings: ConsulSettings): Record<string, string> {
  return {
    CONSUL_HTTP_ADDR: settings.address,
    ...(settings.token ? { CONSUL_HTTP_TOKEN: settings.token } : {}),
    ...(settings.caFile ? { CONSUL_CACERT: settings.caFile } : {}),
    ...(settings.certFile ? { CONSUL_CLIENT_CERT: settings.certFile } : {}),
    ...(settings.keyFile ? { CONSUL_CLIENT_KEY: settings.keyFile } : {}),
  }
}

export interface ConsulAnswer {
  status: number
  text: string
}

export interface ConsulRequestOptions {
  /** sent as JSON */
  body?: unknown
  /** default 5000 */
  timeoutMs?: number
  /** a token other than the settings' (provisioning acts as the administrator, tests as each service) */
  token?: string
}

/** One call, whatever its status; throws only when no answer came (refused, TLS, timeout). */
export function consulRequest(
  settings: ConsulSettings,
  method: 'GET' | 'PUT' | 'DELETE',
  path: string,
  options: ConsulRequestOptions = {},
): Promise<ConsulAnswer> {
  const url = new URL(`${consulBaseUrl(settings.address)}${path}`)
  const https = url.protocol === 'https:'
  if (!https && (settings.caFile || settings.certFile || settings.keyFile)) {
    throw new Error(`Consul TLS files were given for a plain-HTTP address (${url.origin}): use https://`)
  }
  const token = options.token ?? settings.token
  const body = options.body === undefined ? undefined : JSON.stringify(options.body)
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(token ? { 'x-consul-token': token } : {}),
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  }
  const tls = https
    ? {
        ...(settings.caFile ? { ca: readFileSync(settings.caFile) } : {}),
        ...(settings.certFile ? { cert: readFileSync(settings.certFile) } : {}),
        ...(settings.keyFile ? { key: readFileSync(settings.keyFile) } : {}),
      }
    : {}
  const send = https ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      { method, headers, ...tls, signal: AbortSignal.timeout(options.timeoutMs ?? 5000), agent: false },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', reject)
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        )
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** One call that must succeed (2xx): its body's text; otherwise an error naming the call, the status and Consul's words. */
export async function consulCall(
  settings: ConsulSettings,
  method: 'GET' | 'PUT' | 'DELETE',
  path: string,
  options: ConsulRequestOptions = {},
): Promise<string> {
  const answer = await consulRequest(settings, method, path, options)
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`Consul ${method} ${path}: ${answer.status} ${answer.text.trim().slice(0, 500)}`)
  }
  return answer.text
}
