// Security mails that auth sends itself (a password reset link, a password changed notice, an address to verify):
// the user cannot turn them off and they carry no List-Unsubscribe (packages/mail's `security` templates). A mail is
// prepared here (an id, and the part of its data that is a secret, such as a link holding a token, encrypted with
// the row's id authenticated) and written by the caller in the transaction of what it tells; the sender round
// (security-mail-sender.ts) sends it.
import { randomUUID } from 'node:crypto'
import type { Queryable } from '@meridian/db'
import type { TemplateData } from '@meridian/mail'
import type { PreparedSecurityMail, SecurityMailsRepository } from '../data/security-mails-repository.ts'
import { createKeyEncryption, type EncryptionPurpose } from './key-encryption.ts'

/** The templates auth sends. */
export type SecurityMailName =
  | 'password_reset'
  | 'verify_address'
  | 'password_changed'
  | 'address_change_requested'

/** Its own key (HKDF's info) under SIGNING_KEY_ENCRYPTION_SECRET: a sealed link is no signing key, nor one of it. */
export const securityMailPurpose: EncryptionPurpose = {
  info: 'security-mail-encryption v1',
  noun: 'security mail',
}

/** What the sealed data is authenticated with: the row's id, so that no row's secret can be moved to another. */
const sealedFor = (mailId: string) => `security-mail:${mailId}`

export interface SecurityMailSealing {
  /** A mail with an id of its own; the fields named in `secret` encrypted, the others kept as data. */
  prepare<Name extends SecurityMailName>(
    template: Name,
    data: TemplateData<Name>,
    secret?: readonly (keyof TemplateData<Name> & string)[],
  ): PreparedSecurityMail
  /** Its sealed data under the first secret of SIGNING_KEY_ENCRYPTION_SECRET; undefined when it is already. */
  resealed(mail: { id: string; sealedData: string }): string | undefined
  /** more than one secret is listed: pending mails may need sealing again */
  rotating: boolean
  /** The whole data of a taken mail: its data and, decrypted, its secret part. */
  unseal(mail: {
    id: string
    data: Record<string, unknown>
    sealedData: string | null
  }): Record<string, unknown>
}

export function createSecurityMailSealing(encryptionSecret: string): SecurityMailSealing {
  const encryption = createKeyEncryption(encryptionSecret, securityMailPurpose)
  return {
    prepare(template, data, secret = []) {
      const id = randomUUID()
      const open: Record<string, unknown> = {}
      const hidden: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(data)) {
        if ((secret as readonly string[]).includes(key)) hidden[key] = value
        else open[key] = value
      }
      const sealedData =
        secret.length === 0
          ? null
          : encryption.encrypt(sealedFor(id), Buffer.from(JSON.stringify(hidden), 'utf8'))
      return { id, template, data: open, sealedData }
    },
    resealed: ({ id, sealedData }) => encryption.resealed(sealedFor(id), sealedData),
    rotating: encryption.rotating,
    unseal({ id, data, sealedData }) {
      if (sealedData === null) return data
      const hidden = JSON.parse(encryption.decrypt(sealedFor(id), sealedData).toString('utf8')) as object
      return { ...data, ...hidden }
    },
  }
}

/** The mails written in the transaction of a change (password-change.ts, password-reset.ts). */
export function createSecurityMailQueue(
  repository: Pick<SecurityMailsRepository, 'enqueueFor'>,
  sealing: Pick<SecurityMailSealing, 'prepare'>,
  clock: () => number = Date.now,
) {
  return {
    /** "Your password was changed", to the user's address, in the transaction `tx` of the change. */
    async passwordChanged(userId: string, tx: Queryable): Promise<void> {
      const changedAt = new Date(clock()).toISOString()
      await repository.enqueueFor(userId, sealing.prepare('password_changed', { changedAt }), tx)
    },
  }
}

export type SecurityMailQueue = ReturnType<typeof createSecurityMailQueue>
