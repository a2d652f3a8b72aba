// Secrets at rest: AES-256-GCM with a key derived (HKDF-SHA-256) from SIGNING_KEY_ENCRYPTION_SECRET, one key per
// purpose: the private signing keys, and the links (with their tokens) of security mails waiting to be sent.
// SIGNING_KEY_ENCRYPTION_SECRET may be a comma-separated list, to rotate it: the first secret encrypts, every one of
// them decrypts, and what is stored under another than the first is sealed again under the first (`resealed`) by the
// key ring and the mail sender, so the older secrets can leave the list (docs/how-to/rotating-secrets.md).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const version = 'v1'

/** The shortest secret accepted: a long random value. */
export const minimumSecretLength = 32

/** What is encrypted: each purpose derives a key of its own (HKDF's info), and names its rows in errors. */
export interface EncryptionPurpose {
  info: string
  /** how an error names a row, e.g. `signing key` */
  noun: string
}

export const signingKeyPurpose: EncryptionPurpose = { info: 'signing-key-encryption v1', noun: 'signing key' }

/**
 * The secrets of SIGNING_KEY_ENCRYPTION_SECRET, the encrypting one first: one, or a comma-separated list (spaces
 * around each ignored). Throws, naming the variable but never a secret, when one is shorter than the minimum, or
 * named twice.
 */
export function encryptionSecretsOf(value: string): string[] {
  const secrets = value.split(',').map((each) => each.trim())
  if (secrets.some((each) => each.length < minimumSecretLength)) {
    throw new Error(
      `SIGNING_KEY_ENCRYPTION_SECRET: each secret of the list must have at least ${minimumSecretLength} characters`,
    )
  }
  if (new Set(secrets).size !== secrets.length) {
    throw new Error('SIGNING_KEY_ENCRYPTION_SECRET: a secret is named twice in the list')
  }
  return secrets
}

function deriveKey(secret: string, info: string): Buffer {
  // HKDF, not a password hash: the secret is a long random value from configuration, not something a person chose
  return Buffer.from(hkdfSync('sha256', secret, 'meridian-auth', info, 32))
}

export interface KeyEncryption {
  /** `v1.<iv>.<tag>.<ciphertext>` (base64url) under the first secret; `kid` is authenticated too (no row swaps) */
  encrypt(kid: string, plaintext: Buffer): string
  /** under whichever secret of the list it was sealed with */
  decrypt(kid: string, sealed: string): Buffer
  /** the row sealed again under the first secret; undefined when it is under the first already */
  resealed(kid: string, sealed: string): string | undefined
  /** more than one secret is listed: a rotation is under way, and rows may need sealing again */
  rotating: boolean
}

/** The plaintext under `key`, or undefined when the row was not sealed with it (GCM's tag does not match). */
function openWith(key: Buffer, kid: string, parts: { iv: string; authTag: string; ciphertext: string }) {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts.iv, 'base64url'))
  decipher.setAAD(Buffer.from(kid))
  decipher.setAuthTag(Buffer.from(parts.authTag, 'base64url'))
  try {
    return Buffer.concat([decipher.update(Buffer.from(parts.ciphertext, 'base64url')), decipher.final()])
  } catch {
    return undefined
  }
}

export function createKeyEncryption(
  secret: string,
  { info, noun }: EncryptionPurpose = signingKeyPurpose,
): KeyEncryption {
  const keys = encryptionSecretsOf(secret).map((each) => deriveKey(each, info))
  const [first] = keys
  if (!first) throw new Error('SIGNING_KEY_ENCRYPTION_SECRET names no secret')

  /** The plaintext and the index of the secret it was sealed under. */
  function open(kid: string, sealed: string): { plaintext: Buffer; index: number } {
    const [tag, iv, authTag, ciphertext] = sealed.split('.')
    if (tag !== version || !iv || !authTag || !ciphertext) {
      throw new Error(`${noun} ${kid}: unknown encryption format`)
    }
    for (const [index, key] of keys.entries()) {
      const plaintext = openWith(key, kid, { iv, authTag, ciphertext })
      if (plaintext) return { plaintext, index }
    }
    throw new Error(
      `${noun} ${kid}: cannot be decrypted (is the secret it was stored with in SIGNING_KEY_ENCRYPTION_SECRET?)`,
    )
  }

  function encrypt(kid: string, plaintext: Buffer): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', first as Buffer, iv)
    cipher.setAAD(Buffer.from(kid))
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
    return [version, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.')
  }

  return {
    encrypt,
    decrypt: (kid, sealed) => open(kid, sealed).plaintext,
    resealed(kid, sealed) {
      const { plaintext, index } = open(kid, sealed)
      return index === 0 ? undefined : encrypt(kid, plaintext)
    },
    rotating: keys.length > 1,
  }
}
