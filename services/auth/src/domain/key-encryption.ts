// Secrets at rest: AES-256-GCM with a key derived (HKDF-SHA-256) from SIGNING_KEY_ENCRYPTION_SECRET, one key per
// purpose: the private signing keys, and the links (with their tokens) of security mails waiting to be sent.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const version = 'v1'

/** What is encrypted: each purpose derives a key of its own (HKDF's info), and names its rows in errors. */
export interface EncryptionPurpose {
  info: string
  /** how an error names a row, e.g. `signing key` */
  noun: string
}

export const signingKeyPurpose: EncryptionPurpose = { info: 'signing-key-encryption v1', noun: 'signing key' }

function deriveKey(secret: string, info: string): Buffer {
  // HKDF, not a password hash: the secret is a long random value from configuration, not something a person chose
  return Buffer.from(hkdfSync('sha256', secret, 'meridian-auth', info, 32))
}

export interface KeyEncryption {
  /** `v1.<iv>.<tag>.<ciphertext>` (base64url); `kid` is authenticated too, so a row cannot be swapped for another */
  encrypt(kid: string, plaintext: Buffer): string
  decrypt(kid: string, sealed: string): Buffer
}

export function createKeyEncryption(
  secret: string,
  { info, noun }: EncryptionPurpose = signingKeyPurpose,
): KeyEncryption {
  const key = deriveKey(secret, info)
  return {
    encrypt(kid, plaintext) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(kid))
      const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
      return [version, iv, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.')
    },
    decrypt(kid, sealed) {
      const [tag, iv, authTag, ciphertext] = sealed.split('.')
      if (tag !== version || !iv || !authTag || !ciphertext) {
        throw new Error(`${noun} ${kid}: unknown encryption format`)
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(kid))
      decipher.setAuthTag(Buffer.from(authTag, 'base64url'))
      try {
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()])
      } catch (error) {
        throw new Error(
          `${noun} ${kid}: cannot be decrypted (is SIGNING_KEY_ENCRYPTION_SECRET the one it was stored with?)`,
          { cause: error },
        )
      }
    },
  }
}
