// Event ids: UUID version 7 (RFC 9562), unique and sortable by creation time.
import { randomBytes } from 'node:crypto'

export function newEventId(now = Date.now()): string {
  const bytes = randomBytes(16)
  // 48-bit big-endian Unix time in milliseconds
  bytes.writeUIntBE(now, 0, 6)
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f) // version 7
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f) // RFC 4122 variant
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
