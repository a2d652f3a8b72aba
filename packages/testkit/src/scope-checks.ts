// API scopes, checked the same way for every service from its own OpenAPI document: each operation that takes a
// credential lists a scope of the catalogue, and a credential limited to scopes (an API key resolved at auth through
// Consul, an access token of the OpenID provider) is refused with 403 INSUFFICIENT_SCOPE naming the scope wherever it
// lacks it, before anything is read or stored; with the scope it passes that check.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiKeysStandIn, type StandInKeyOptions, startApiKeysStandIn } from './api-keys-stand-in.ts'
import { expectErrorEnvelope, type HttpAnswer } from './error-envelope.ts'
import { expectInputsBounded } from './input-bounds-check.ts'
import { openApiDocumentOf } from './openapi-document.ts'
import { accessToken, tokenEnv } from './tokens.ts'

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The part of a Fastify instance the checks use. */
export interface ScopedApp {
  inject(options: {
    method: Method
    url: string
    headers?: Record<string, string>
  }): PromiseLike<HttpAnswer & { json(): unknown }>
}

/** An operation of the document that takes a credential, and what its `security` says. */
export interface CredentialOperation {
  method: Method
  /** the document's path template, e.g. /api/v1/orders/{id} */
  path: string
  /** the scopes its bearerAuth / apiKeyAuth requirements list */
  scopes: string[]
  /** anonymous callers are served too (a `{}` requirement) */
  optional: boolean
  /** the schemes it accepts */
  schemes: string[]
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, { security?: Record<string, string[]>[] }>>
  components?: { securitySchemes?: Record<string, { flows?: Record<string, { scopes?: object }> }> }
}

const credentialSchemes = ['bearerAuth', 'apiKeyAuth', 'sessionCookie']
const scopedSchemes = ['bearerAuth', 'apiKeyAuth']
const methods: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** The scope catalogue as the document states it: the scopes of its oauth2 scheme. */
export function documentedScopes(document: OpenApiDocument): string[] {
  const flows = document.components?.securitySchemes?.oauth2?.flows ?? {}
  return [...new Set(Object.values(flows).flatMap((flow) => Object.keys(flow.scopes ?? {})))]
}

/** Every operation of the document that takes a credential a user's rights come with. */
export function credentialOperations(document: OpenApiDocument): CredentialOperation[] {
  const operations: CredentialOperation[] = []
  for (const [path, byMethod] of Object.entries(document.paths ?? {})) {
    for (const [name, operation] of Object.entries(byMethod)) {
      const method = name.toUpperCase() as Method
      const requirements = operation.security ?? []
      if (!methods.includes(method)) continue
      const schemes = [...new Set(requirements.flatMap((requirement) => Object.keys(requirement)))]
      if (!schemes.some((scheme) => credentialSchemes.includes(scheme))) continue
      const scopes = requirements
        .flatMap((requirement) => scopedSchemes.map((scheme) => requirement[scheme] ?? []))
        .find((listed) => listed.length > 0)
      operations.push({
        method,
        path,
        scopes: scopes ?? [],
        optional: requirements.some((requirement) => Object.keys(requirement).length === 0),
        schemes,
      })
    }
  }
  return operations
}

/**
 * Every operation that takes a credential lists scopes, each of the document's catalogue (or OpenID Connect's, for
 * /userinfo); the operations, for the checks that follow.
 */
export async function expectScopesDeclared(app: ScopedApp): Promise<CredentialOperation[]> {
  const document = await openApiDocumentOf<OpenApiDocument>(app)
  const catalogue = documentedScopes(document)
  expect(catalogue.length, 'the oauth2 scheme lists the scope catalogue').toBeGreaterThan(0)
  const operations = credentialOperations(document)
  const undeclared = operations
    .filter((operation) => operation.scopes.length === 0)
    .map((operation) => `${operation.method} ${operation.path}`)
  expect(undeclared, 'operations that take a credential but list no scope').toEqual([])
  const unknown = operations.flatMap((operation) =>
    operation.scopes
      .filter((scope) => !catalogue.includes(scope))
      .map((scope) => `${operation.method} ${operation.path}: ${scope}`),
  )
  expect(unknown, 'scopes outside the catalogue').toEqual([])
  return operations
}

/** The operation's URL with a fresh id in each path parameter (the scope is checked before any is read). */
const urlOf = (operation: CredentialOperation) => operation.path.replaceAll(/\{[^{}]+\}/g, () => randomUUID())

/** Operations a credential of `scheme` can call without anonymous access: where the scope alone decides. */
const sweptBy = (operations: CredentialOperation[], scheme: string) =>
  operations.filter((operation) => operation.schemes.includes(scheme) && !operation.optional)

export interface ScopeSweepOptions {
  /** the credential's headers, limited to exactly `scopes`, its owner an admin (so only the scope can refuse) */
  credential(scopes: readonly string[]): Record<string, string> | Promise<Record<string, string>>
  /** which scheme the credential is: the operations accepting it are swept */
  scheme: 'apiKeyAuth' | 'bearerAuth'
  /** a digest of what the service stores (storedStateDigest): the refused requests must leave it as it was */
  state?: () => Promise<string>
}

/**
 * A credential with every scope of the catalogue but an operation's is refused on that operation with 403
 * INSUFFICIENT_SCOPE, its message naming the scope, and nothing stored changes. Returns how many were swept.
 */
export async function expectScopesRefused(app: ScopedApp, options: ScopeSweepOptions): Promise<number> {
  const document = await openApiDocumentOf<OpenApiDocument>(app)
  const catalogue = documentedScopes(document)
  const operations = sweptBy(credentialOperations(document), options.scheme)
  const before = await options.state?.()
  for (const operation of operations) {
    const others = catalogue.filter((scope) => !operation.scopes.includes(scope))
    const answer = await app.inject({
      method: operation.method,
      url: urlOf(operation),
      headers: await options.credential(others),
    })
    const context = `${operation.method} ${operation.path} with every scope but ${operation.scopes.join(' ')}`
    const error = refusalOf(answer, 403, 'INSUFFICIENT_SCOPE', context)
    expect(error.message, context).toBe(`Insufficient scope: this operation needs ${operation.scopes[0]}`)
  }
  if (options.state) expect(await options.state(), 'what the service stores').toBe(before)
  return operations.length
}

/**
 * A credential holding only an operation's scopes passes the scope check on it: whatever the operation then answers
 * (404 for the fresh ids, 422 for the missing body), it is not 401, nor INSUFFICIENT_SCOPE naming one of them (an
 * operation may ask more of some requests, e.g. admin:write to act on another user's account). Returns each
 * answer's status by operation.
 */
export async function expectScopesPass(
  app: ScopedApp,
  options: Omit<ScopeSweepOptions, 'state'>,
): Promise<Record<string, number>> {
  const operations = sweptBy(
    credentialOperations(await openApiDocumentOf<OpenApiDocument>(app)),
    options.scheme,
  )
  const statuses: Record<string, number> = {}
  for (const operation of operations) {
    const answer = await app.inject({
      method: operation.method,
      url: urlOf(operation),
      headers: await options.credential(operation.scopes),
    })
    const name = `${operation.method} ${operation.path}`
    statuses[name] = answer.statusCode
    const context = `${name} with ${operation.scopes.join(' ')}`
    expect(answer.statusCode, context).not.toBe(401)
    if (answer.statusCode === 403) {
      const error = refusalOf(answer, 403, undefined, context)
      if (error.code === 'INSUFFICIENT_SCOPE') {
        for (const scope of operation.scopes) expect(error.message, context).not.toContain(` ${scope}`)
      }
    }
  }
  return statuses
}

interface GraphQLErrors {
  errors?: { message?: string; extensions?: { code?: string } }[]
}

/**
 * The refusal in an answer: the error envelope, or GraphQL's response shape where the operation answers in it
 * (/graphql's documented statuses): its first error's code and message. `code` undefined: any code.
 */
function refusalOf(
  answer: HttpAnswer,
  status: number,
  code: string | undefined,
  context: string,
): { code: string; message: string } {
  const body = answer.json() as GraphQLErrors & { error?: { code?: string } }
  if (!Array.isArray(body?.errors)) {
    const error = expectErrorEnvelope(answer, status, code ?? String(body?.error?.code), { context })
    return { code: error.code, message: error.message }
  }
  expect(answer.statusCode, context).toBe(status)
  const [first] = body.errors
  if (code) expect(first?.extensions?.code, context).toBe(code)
  return { code: first?.extensions?.code ?? '', message: first?.message ?? '' }
}

/** What a postgres.js pool offers the digest. */
export interface StateReader {
  unsafe(query: string): PromiseLike<readonly object[]>
}

/** What storedStateDigest reads of tables whose rows a service's own background rounds change. */
export interface StoredStateOptions {
  /**
   * Tables digested by their rows' ids alone: a row added or removed still changes the digest, a row a background
   * round updates meanwhile (a mail sender's attempts and status) does not
   */
  idsOnly?: readonly string[]
}

/** A digest of every row of every table of the database's public schema: equal digests, nothing stored changed. */
export async function storedStateDigest(sql: StateReader, options: StoredStateOptions = {}): Promise<string> {
  const idsOnly = new Set(options.idsOnly ?? [])
  const tables = (await sql.unsafe(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
  )) as { name: string }[]
  const digests: string[] = []
  for (const { name } of tables) {
    const table = `"${name.replaceAll('"', '""')}"`
    const value = idsOnly.has(name) ? 't.id::text' : 't::text'
    const [row] = (await sql.unsafe(
      `select md5(coalesce(string_agg(${value}, ',' order by ${value}), '')) as digest from ${table} t`,
    )) as { digest: string }[]
    digests.push(`${name}:${row?.digest}`)
  }
  return digests.join(' ')
}

/** What a service's scope suite needs: its test app built on the given environment. */
export interface ServiceScopesSuite<Built extends { app: ScopedApp; close(): Promise<void> }> {
  service: string
  /** builds the service's test app with `env` added (the stand-in's AUTH_SERVICE_NAME and the test tokens' keys) */
  build(env: Record<string, string>): Promise<Built>
  /** what it stores; by default the digest of the built app's `sql`, when it has one */
  state?(built: Built): Promise<string>
  /**
   * A key that holds an operation's scope is served by it: the service's own requests and their answers (the keys
   * come from auth's stand-in, resolved through Consul by the kit as in production).
   */
  served?(context: { built: Built; keyFor(options: StandInKeyOptions): string }): Promise<void>
  /**
   * Inputs left without a bound, each the start of a place expectInputsBounded names, with the reason beside it: a
   * place its schema cannot bound (ideally none).
   */
  unboundedInputs?: readonly string[]
}

const apiKeyHeaders = (standIn: ApiKeysStandIn) => (scopes: readonly string[]) => ({
  'x-api-key': standIn.keyFor({ scopes }),
})

/** An admin's access token as the OpenID provider issues it: limited to `scopes` (its `scope` and `client_id`). */
const scopedBearer = (scopes: readonly string[]) => ({
  authorization: `Bearer ${accessToken('admin', randomUUID(), { scopes })}`,
})

/**
 * The scope tests every service runs, from its OpenAPI document: every operation that takes a credential lists a
 * scope of the catalogue; an API key (resolved at auth through Consul) or an access token of the OpenID provider
 * lacking it is refused with 403 INSUFFICIENT_SCOPE naming it on every such operation, and nothing is stored; with it,
 * the operation passes the scope check. The same document's inputs are held to their bounds (issue 42's class check):
 * every array, string and object of any keys a client sends is bounded by its schema.
 */
export function describeServiceScopes<Built extends { app: ScopedApp; close(): Promise<void> }>(
  suite: ServiceScopesSuite<Built>,
): void {
  describe(`${suite.service}: API scopes`, () => {
    let standIn: ApiKeysStandIn
    let built: Built
    beforeAll(async () => {
      standIn = await startApiKeysStandIn()
      built = await suite.build({ ...tokenEnv, AUTH_SERVICE_NAME: standIn.name })
    })
    afterAll(async () => {
      await built?.close()
      await standIn?.close()
    })

    const state = () => {
      if (suite.state) return suite.state(built)
      const { sql } = built as { sql?: StateReader }
      return sql ? storedStateDigest(sql) : Promise.resolve('')
    }

    it('when the OpenAPI document is read, then every operation that takes a credential lists a scope of the catalogue', async () => {
      const operations = await expectScopesDeclared(built.app)
      expect(operations.length).toBeGreaterThan(0)
    })

    it('when the OpenAPI document is read, then every input a client can send is bounded', async () => {
      const inputs = await expectInputsBounded(built.app, suite.unboundedInputs)
      expect(inputs).toBeGreaterThan(0)
    })

    it("when an API key lacks an operation's scope, then every such operation answers 403 INSUFFICIENT_SCOPE naming it, and nothing stored changes", async () => {
      const swept = await expectScopesRefused(built.app, {
        scheme: 'apiKeyAuth',
        credential: apiKeyHeaders(standIn),
        state,
      })
      expect(swept).toBeGreaterThan(0)
      // the keys were resolved at the stand-in, found in Consul: the service asked about each
      expect(standIn.introspections()).toBeGreaterThanOrEqual(swept)
    })

    it("when an API key holds only an operation's scope, then it passes the scope check on every operation", async () => {
      const statuses = await expectScopesPass(built.app, {
        scheme: 'apiKeyAuth',
        credential: apiKeyHeaders(standIn),
      })
      expect(Object.keys(statuses).length).toBeGreaterThan(0)
    })

    it("when an access token of the OpenID provider lacks an operation's scope, then 403 INSUFFICIENT_SCOPE naming it; with it, the check passes", async () => {
      const swept = await expectScopesRefused(built.app, {
        scheme: 'bearerAuth',
        credential: scopedBearer,
        state,
      })
      expect(swept).toBeGreaterThan(0)
      await expectScopesPass(built.app, { scheme: 'bearerAuth', credential: scopedBearer })
    })

    if (suite.served) {
      const served = suite.served
      it("when a key holding an operation's scope is used, then the service serves it (the key resolved at auth through Consul)", async () => {
        await served({ built, keyFor: (options) => standIn.keyFor(options) })
      })
    }
  })
}
