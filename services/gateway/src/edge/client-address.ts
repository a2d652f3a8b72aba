// Who the client is: the direct peer, or, when the peer is a trusted proxy, the address it forwarded for.
import { BlockList, isIP } from 'node:net'
import { ConfigError } from '@meridian/service-kit'

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is the IPv4 address 10.0.0.1. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped?.[1] ?? address
}

export interface TrustedProxies {
  /** true when nothing is trusted: X-Forwarded-* from clients is then ignored outright */
  readonly none: boolean
  trusts(address: string): boolean
}

/** TRUSTED_PROXIES: comma-separated addresses and CIDR blocks (`10.0.0.0/8`, `::1`, `127.0.0.1`). */
export function trustedProxies(entries: string[]): TrustedProxies {
  const list = new BlockList()
  const problems: string[] = []
  for (const entry of entries) {
    const [address = '', bits, ...extra] = entry.split('/')
    const family = isIP(address)
    const prefix = bits === undefined ? undefined : Number(bits)
    const maxBits = family === 4 ? 32 : 128
    if (
      family === 0 ||
      extra.length > 0 ||
      (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= maxBits))
    ) {
      problems.push(`TRUSTED_PROXIES: '${entry}' is not an IP address or CIDR block`)
      continue
    }
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, prefix, type)
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return {
    none: entries.length === 0,
    trusts(raw) {
      // the common case (no proxy in front) costs nothing per request
      if (entries.length === 0) return false
      const address = normalizeAddress(raw)
      const family = isIP(address)
      return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6')
    },
  }
}

/** The X-Forwarded-For header as a list of addresses, left (original client) to right (last proxy). */
export function forwardedForChain(header: string | string[] | undefined): string[] {
  if (header === undefined) return []
  return (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
}

/**
 * The client's address (proxy-addr's rule, which Fastify's trustProxy uses): walk from the direct peer leftwards
 * through X-Forwarded-For while the hop is trusted; the first untrusted hop is the client. An untrusted peer's
 * X-Forwarded-For is never read.
 */
export function clientAddress(peer: string, forwardedFor: string[], trusted: TrustedProxies): string {
  let client = normalizeAddress(peer)
  if (trusted.none) return client
  for (let i = forwardedFor.length - 1; i >= 0 && trusted.trusts(client); i -= 1) {
    const hop = normalizeAddress(forwardedFor[i] ?? '')
    if (isIP(hop) === 0) break
    client = hop
  }
  return client
}
