// A Kafka client's TLS and SASL credentials from the variables every service and tool reads (docs/reference/configuration.md):
// parsed here once, for the services' clients (packages/events createKafka, through ServiceEnv) and for the tools that
// connect on their own (scripts/events replay, infra's provisioning). Certificate variables hold paths to PEM files,
// read when the client is made; every problem is named by its variable, and no password or key is ever shown.
import { readFileSync, statSync } from 'node:fs'
import type { KafkaConfig } from 'kafkajs'
import { type Static, Type } from 'typebox'

/** The SASL mechanisms a Meridian client offers (kafkajs' names). */
export const kafkaSaslMechanisms = ['scram-sha-512', 'scram-sha-256', 'plain'] as const
export type KafkaSaslMechanism = (typeof kafkaSaslMechanisms)[number]

/** Longest accepted path of a PEM file (Linux' PATH_MAX). */
const pathMaxLength = 4096
const usernameMaxLength = 256
const passwordMaxLength = 1024
/** A PEM file larger than this is not a certificate, a key or a CA bundle (and /dev/zero is not read forever). */
const pemMaxBytes = 1024 * 1024

const pemPath = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: pathMaxLength, description }))

/**
 * The variables as a service's configuration schema declares them (ServiceEnv spreads these properties): what a
 * service refuses at boot before kafkaSecurityFromEnv reads the files.
 */
export const KafkaSecurityEnv = Type.Object({
  KAFKA_TLS: Type.Optional(
    Type.Boolean({
      description: 'TLS to the brokers; unset: false, or true when any KAFKA_TLS_* file is given',
    }),
  ),
  KAFKA_TLS_CA: pemPath(
    "the CA (PEM file) the brokers' certificates are checked against; unset: the system's",
  ),
  KAFKA_TLS_CERT: pemPath('a client certificate (PEM file) for mutual TLS, with KAFKA_TLS_KEY'),
  KAFKA_TLS_KEY: pemPath("the client certificate's private key (PEM file)"),
  KAFKA_SASL_MECHANISM: Type.Optional(
    Type.Union(
      kafkaSaslMechanisms.map((mechanism) => Type.Literal(mechanism)),
      { description: 'SASL authentication, with KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD' },
    ),
  ),
  KAFKA_SASL_USERNAME: Type.Optional(Type.String({ minLength: 1, maxLength: usernameMaxLength })),
  KAFKA_SASL_PASSWORD: Type.Optional(Type.String({ minLength: 1, maxLength: passwordMaxLength })),
})
export type KafkaSecurityEnv = Static<typeof KafkaSecurityEnv>

export type KafkaSecurityVariable = keyof KafkaSecurityEnv
export const kafkaSecurityVariables = Object.keys(KafkaSecurityEnv.properties) as KafkaSecurityVariable[]

/**
 * Where the variables come from: a service's loaded configuration (KAFKA_TLS a boolean) or an environment as it is
 * (process.env, an engine's envFor(): every value a string).
 */
export type KafkaSecurityVariables = {
  readonly [Name in KafkaSecurityVariable]?: string | boolean | undefined
}

/** TLS with files' contents: the CA to trust (else the system's), a client certificate and its key (mutual TLS). */
export interface KafkaTls {
  ca?: string
  cert?: string
  key?: string
}

export interface KafkaSasl {
  mechanism: KafkaSaslMechanism
  username: string
  password: string
}

/** What a Kafka client is made with besides its brokers: none of it for a plaintext broker without authentication. */
export interface KafkaSecurity {
  /** TLS: true (the system's CAs, no client certificate) or the PEM texts the files held */
  ssl?: true | KafkaTls
  sasl?: KafkaSasl
}

/** The variables do not describe a client that could connect: every problem, each naming its variable. */
export class KafkaSecurityError extends Error {
  constructor(readonly problems: string[]) {
    super(`Kafka client configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'KafkaSecurityError'
  }
}

/** A value as text, unset when empty (as the services' loadConfig reads an empty variable). */
function text(value: string | boolean | undefined): string | undefined {
  if (value === undefined || value === '') return undefined
  return String(value)
}

/** A value shown in a message: quoted, and cut short (a hostile value is not echoed whole). */
const shown = (value: string): string => JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
/** A path shown in a message: whole (at most pathMaxLength characters), quoted. */
const shownPath = (path: string): string => JSON.stringify(path)

/** What `marker` says the file must hold: a certificate, or a private key (PKCS#8, RSA or EC). */
const pemKinds = {
  certificate: /-----BEGIN CERTIFICATE-----/,
  'private key': /-----BEGIN (?:ENCRYPTED |RSA |EC )?PRIVATE KEY-----/,
} as const

/** The file's PEM text, or a problem naming the variable (the path is shown: it is no secret). */
function readPem(
  variable: KafkaSecurityVariable,
  path: string,
  kind: keyof typeof pemKinds,
  problems: string[],
): string | undefined {
  if (path.length > pathMaxLength) {
    problems.push(`${variable}: a path of at most ${pathMaxLength} characters`)
    return undefined
  }
  try {
    const stat = statSync(path)
    if (!stat.isFile()) {
      problems.push(`${variable}: ${shownPath(path)} is not a file`)
      return undefined
    }
    if (stat.size > pemMaxBytes) {
      problems.push(`${variable}: ${shownPath(path)} is larger than ${pemMaxBytes} bytes: not a PEM ${kind}`)
      return undefined
    }
    const pem = readFileSync(path, 'utf8')
    if (!pemKinds[kind].test(pem)) {
      problems.push(`${variable}: ${shownPath(path)} holds no PEM ${kind}`)
      return undefined
    }
    return pem
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    problems.push(`${variable}: cannot read ${shownPath(path)} (${code})`)
    return undefined
  }
}

/**
 * The client's TLS and SASL from KAFKA_TLS, KAFKA_TLS_CA, KAFKA_TLS_CERT, KAFKA_TLS_KEY, KAFKA_SASL_MECHANISM,
 * KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, the files read now; nothing when none is set (a plaintext broker).
 * Throws a KafkaSecurityError naming every problem: a flag that is not true or false, TLS files with KAFKA_TLS=false,
 * a certificate without its key (or a key without its certificate), an unreadable or non-PEM file, a mechanism that
 * is not one of kafkaSaslMechanisms, a mechanism without its username or password, or credentials without a mechanism.
 * SASL without TLS (a SASL_PLAINTEXT listener) is accepted; PLAIN then sends the password in clear.
 */
export function kafkaSecurityFromEnv(env: KafkaSecurityVariables): KafkaSecurity {
  const problems: string[] = []
  const flag = env.KAFKA_TLS
  let tls: boolean | undefined
  if (typeof flag === 'boolean') tls = flag
  else if (flag === 'true' || flag === 'false') tls = flag === 'true'
  else if (text(flag) !== undefined)
    problems.push(`KAFKA_TLS: must be true or false (got ${shown(String(flag))})`)

  const files = {
    KAFKA_TLS_CA: text(env.KAFKA_TLS_CA),
    KAFKA_TLS_CERT: text(env.KAFKA_TLS_CERT),
    KAFKA_TLS_KEY: text(env.KAFKA_TLS_KEY),
  }
  const given = (Object.keys(files) as (keyof typeof files)[]).filter((name) => files[name] !== undefined)
  if (tls === false && given.length > 0)
    problems.push(`KAFKA_TLS is false but ${given.join(' and ')} ${given.length === 1 ? 'is' : 'are'} set`)
  if (files.KAFKA_TLS_CERT !== undefined && files.KAFKA_TLS_KEY === undefined)
    problems.push('KAFKA_TLS_CERT is set without KAFKA_TLS_KEY (a client certificate needs its private key)')
  if (files.KAFKA_TLS_KEY !== undefined && files.KAFKA_TLS_CERT === undefined)
    problems.push('KAFKA_TLS_KEY is set without KAFKA_TLS_CERT (a private key needs its client certificate)')

  let ssl: KafkaSecurity['ssl']
  if (tls !== false && given.length > 0) {
    const read: KafkaTls = {}
    const ca = files.KAFKA_TLS_CA && readPem('KAFKA_TLS_CA', files.KAFKA_TLS_CA, 'certificate', problems)
    const cert =
      files.KAFKA_TLS_CERT && readPem('KAFKA_TLS_CERT', files.KAFKA_TLS_CERT, 'certificate', problems)
    const key = files.KAFKA_TLS_KEY && readPem('KAFKA_TLS_KEY', files.KAFKA_TLS_KEY, 'private key', problems)
    if (ca) read.ca = ca
    if (cert) read.cert = cert
    if (key) read.key = key
    ssl = read
  } else if (tls === true) {
    ssl = true
  }

  const sasl = saslOf(env, problems)
  if (problems.length > 0) throw new KafkaSecurityError(problems)
  return { ...(ssl === undefined ? {} : { ssl }), ...(sasl === undefined ? {} : { sasl }) }
}

function saslOf(env: KafkaSecurityVariables, problems: string[]): KafkaSasl | undefined {
  const mechanism = text(env.KAFKA_SASL_MECHANISM)
  const username = text(env.KAFKA_SASL_USERNAME)
  const password = text(env.KAFKA_SASL_PASSWORD)
  if (username !== undefined && username.length > usernameMaxLength)
    problems.push(`KAFKA_SASL_USERNAME: at most ${usernameMaxLength} characters`)
  if (password !== undefined && password.length > passwordMaxLength)
    problems.push(`KAFKA_SASL_PASSWORD: at most ${passwordMaxLength} characters`)
  if (mechanism === undefined) {
    const orphans = [
      ...(username === undefined ? [] : ['KAFKA_SASL_USERNAME']),
      ...(password === undefined ? [] : ['KAFKA_SASL_PASSWORD']),
    ]
    if (orphans.length > 0) {
      problems.push(
        `${orphans.join(' and ')} ${orphans.length === 1 ? 'is' : 'are'} set without KAFKA_SASL_MECHANISM (one of ${kafkaSaslMechanisms.join(', ')})`,
      )
    }
    return undefined
  }
  if (!(kafkaSaslMechanisms as readonly string[]).includes(mechanism)) {
    problems.push(
      `KAFKA_SASL_MECHANISM: must be one of ${kafkaSaslMechanisms.join(', ')} (got ${shown(mechanism)})`,
    )
    return undefined
  }
  if (username === undefined)
    problems.push(`KAFKA_SASL_MECHANISM is ${mechanism} but KAFKA_SASL_USERNAME is not set`)
  if (password === undefined)
    problems.push(`KAFKA_SASL_MECHANISM is ${mechanism} but KAFKA_SASL_PASSWORD is not set`)
  if (username === undefined || password === undefined) return undefined
  return { mechanism: mechanism as KafkaSaslMechanism, username, password }
}

/** kafkajs' TLS and SASL settings for a client made with `security`: none for a plaintext broker. */
export function kafkajsSecurity({ ssl, sasl }: KafkaSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const config: Pick<KafkaConfig, 'ssl' | 'sasl'> = {}
  if (ssl === true) config.ssl = true
  else if (ssl) {
    config.ssl = {
      // without a CA of its own, TLS trusts the system's
      ...(ssl.ca === undefined ? {} : { ca: [ssl.ca] }),
      ...(ssl.cert === undefined ? {} : { cert: ssl.cert }),
      ...(ssl.key === undefined ? {} : { key: ssl.key }),
    }
  }
  if (sasl) {
    const { mechanism, username, password } = sasl
    // kafkajs types each mechanism's options apart
    config.sasl =
      mechanism === 'plain'
        ? { mechanism, username, password }
        : mechanism === 'scram-sha-256'
          ? { mechanism, username, password }
          : { mechanism, username, password }
  }
  return config
}
