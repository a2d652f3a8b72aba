// A connection's credential over its life (spec: Authentication 11), on Socket.IO and on /ws alike:
// - a token: `auth:expiring` a minute before it expires; `auth:refresh {token}` swaps in a new token of the same user
//   (holding the scope its namespace needs to connect, when it is limited to scopes: it brings its own), or ends in
//   `auth:failed {message}` and the disconnection; a token that expires without a refresh ends the same way;
// - a cookie session: at its end (its record's expiry in Redis) it is read again: still there (extended), the
//   connection lives on to the new end; gone, `auth:failed` and the disconnection;
// - auth's revocations (a user suspended, deleted, given another role) end, as they arrive, every connection of the
//   user whose credential was issued before the revocation (a connection refreshed since with a newer token stays),
//   and a logout ends the connections of that session.
//
// Tens of thousands of connections each have one: a watch is an object with methods on its prototype, its moments are
// kept by one clock for all of them (a heap and a single timer), what the watches share is one object, and the
// disconnect listener is a shared function. The watches are indexed by user and by session, so a revocation or a
// logout finds its few connections at once.
import {
  AppError,
  AuthRefresh,
  type RealtimeNamespace,
  realtimeMessages,
  realtimeScopes,
} from '@meridian/contracts'
import { type CredentialRevocations, sessionIdHash } from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { SocketCredential } from '../clients/forwarded-credential.ts'
import { type ChannelSocket, ClientEvents, type SocketUser } from './channel.ts'
import { ConnectionIndex } from './connection-index.ts'
import { assertNamespaceScope, type Handshake, HandshakeRefusal } from './handshake.ts'
import { type Timed, WatchClock } from './watch-clock.ts'

export interface WatchCredentialOptions {
  handshake: Pick<Handshake, 'verifyToken' | 'verifySession'>
  /** where each socket's credential is kept for calls on the user's behalf: a refreshed token replaces it */
  credentials: WeakMap<object, SocketCredential>
  /** auth's revocations and ended sessions, as the chassis follows them */
  revocations: Pick<CredentialRevocations, 'revokedBefore' | 'onRevoked' | 'onSessionEnded'>
  /** how long before a token's expiry auth:expiring is sent (REALTIME_TOKEN_NOTICE_MS) */
  noticeMs: number
  log: FastifyBaseLogger
}

type Step = 'notice' | 'end' | 'session-check' | 'stopped'
type WatchedSocket = ChannelSocket<RealtimeNamespace>

/** When a session could not be read at its end (Redis unavailable): it is read again this much later. */
const sessionRetryMs = 5000

/** What every watch of one watcher shares: one object, referenced by each. */
interface Watching {
  clock: WatchClock<CredentialWatch>
  noticeMs: number
  handshake: WatchCredentialOptions['handshake']
  credentials: WeakMap<object, SocketCredential>
  byUser: ConnectionIndex<CredentialWatch>
  bySession: ConnectionIndex<CredentialWatch>
  log: FastifyBaseLogger
}

/** The user index's key: user ids compare without case (uuids, as PostgreSQL writes them: lower case). */
const userKey = (userId: string) => userId.toLowerCase()

/** The spec's auth:failed message of a credential that no longer counts, by its kind. */
const failureOf = (credential: SocketCredential | undefined) =>
  credential?.kind === 'session' ? realtimeMessages.invalidSession : realtimeMessages.invalidToken

/** One connection's credential: timed by the shared clock, indexed by user (and by session for a cookie session). */
export abstract class CredentialWatch implements Timed {
  due = 0
  slot = -1
  step: Step = 'notice'
  /** set while the credential is a cookie session: where the session index holds it */
  sessionHash: string | undefined = undefined

  constructor(readonly watching: Watching) {}

  /** the connection's user as last verified (a refresh or a session's check replaces it) */
  abstract get user(): SocketUser
  abstract set user(user: SocketUser)
  abstract get credential(): SocketCredential | undefined
  abstract set credential(credential: SocketCredential)
  /** Refuses (HandshakeRefusal) a user whose credential may not hold this connection: a scope it lacks. */
  protected abstract admit(user: SocketUser): void
  /** auth:expiring to the client */
  protected abstract notify(expiresAt: number): void
  /** auth:failed to the client, then the disconnection (`later`: after what is being sent has left) */
  protected abstract end(message: string, later: boolean): void

  /** Indexes the connection and times its credential from now on. */
  start(): void {
    this.watching.byUser.add(userKey(this.user.userId), this)
    this.#indexSession()
    this.schedule()
  }

  /** From the credential's end: a token's notice, then its end; a session's check. */
  schedule(): void {
    const { expiresAt, method } = this.user.principal
    if (expiresAt === undefined) {
      this.clear()
      return
    }
    if (method === 'session') {
      this.step = 'session-check'
      this.watching.clock.schedule(this, expiresAt)
      return
    }
    this.step = 'notice'
    this.watching.clock.schedule(this, expiresAt - this.watching.noticeMs)
  }

  /** The connection is gone: no moment, no place in the indexes. */
  stop(): void {
    this.clear()
    this.step = 'stopped'
    this.watching.byUser.delete(userKey(this.user.userId), this)
    if (this.sessionHash !== undefined) this.watching.bySession.delete(this.sessionHash, this)
  }

  clear(): void {
    this.watching.clock.cancel(this)
  }

  /** The credential no longer counts: auth:failed and the disconnection. */
  fail(message: string = failureOf(this.credential), later = false): void {
    this.clear()
    this.end(message, later)
  }

  /** Its moment has come: the notice (then the end is due at expiry), the end, or a session's check. */
  reached(): void {
    if (this.step === 'end') {
      this.fail()
      return
    }
    if (this.step === 'session-check') {
      void this.#checkSession()
      return
    }
    const { expiresAt } = this.user.principal
    if (expiresAt === undefined) return
    this.notify(expiresAt)
    this.step = 'end'
    this.watching.clock.schedule(this, expiresAt)
  }

  /**
   * A token of the same user replaces the credential: its expiry, epoch ms. Anything else fails the connection
   * (auth:failed, the disconnection) and is rejected with the refusal's AppError: another user's token, a bad one, or
   * one limited to scopes without the one this connection needs.
   */
  async refresh(token: string): Promise<number> {
    const user = await this.watching.handshake.verifyToken(token).catch(() => undefined)
    const expiresAt = user?.principal.expiresAt
    // a refresh continues the same user's connection; another user's token is a new connection's business
    if (!user || userKey(user.userId) !== userKey(this.user.userId) || expiresAt === undefined) {
      this.fail(realtimeMessages.invalidToken, true)
      throw AppError.unauthorized(realtimeMessages.invalidToken)
    }
    try {
      this.admit(user)
    } catch (refusal) {
      if (!(refusal instanceof HandshakeRefusal)) throw refusal
      // the old token is not kept on: a connection holds one credential, the one its client last gave
      this.fail(refusal.message, true)
      throw new AppError(403, refusal.code, { message: refusal.message })
    }
    this.user = user
    this.credential = { kind: 'bearer', token: token.replace(/^bearer\s+/i, '').trim() }
    // a session's connection now holds a token: a logout of that session is no longer its end
    if (this.sessionHash !== undefined) this.watching.bySession.delete(this.sessionHash, this)
    this.sessionHash = undefined
    this.schedule()
    return expiresAt
  }

  async #checkSession(): Promise<void> {
    const { credential } = this
    if (credential?.kind !== 'session') return
    try {
      const user = await this.watching.handshake.verifySession(credential.sessionId)
      const { expiresAt } = user.principal
      // gone meanwhile, or refreshed to a token (timed by its token now)
      if (this.step !== 'session-check' || this.credential !== credential) return
      if (
        userKey(user.userId) !== userKey(this.user.userId) ||
        expiresAt === undefined ||
        expiresAt <= Date.now()
      ) {
        this.fail(realtimeMessages.invalidSession)
        return
      }
      // the session was extended: the connection lives on to its new end
      this.user = user
      this.schedule()
    } catch (error) {
      if (this.step !== 'session-check' || this.credential !== credential) return
      if (error instanceof HandshakeRefusal && error.code === 'UNAUTHORIZED') {
        this.fail(realtimeMessages.invalidSession)
        return
      }
      this.watching.log.warn({ err: error }, 'a session could not be read at its end; read again shortly')
      this.watching.clock.schedule(this, Date.now() + sessionRetryMs)
    }
  }

  #indexSession(): void {
    const { credential } = this
    if (credential?.kind !== 'session') return
    this.sessionHash = sessionIdHash(credential.sessionId)
    this.watching.bySession.add(this.sessionHash, this)
  }
}

/** A Socket.IO socket's credential (each namespace of a connection is a socket of its own). */
class SocketWatch extends CredentialWatch {
  constructor(
    watching: Watching,
    readonly socket: WatchedSocket,
  ) {
    super(watching)
  }

  get user(): SocketUser {
    return this.socket.data.user
  }
  set user(user: SocketUser) {
    this.socket.data.user = user
  }
  get credential(): SocketCredential | undefined {
    return this.watching.credentials.get(this.socket)
  }
  set credential(credential: SocketCredential) {
    this.watching.credentials.set(this.socket, credential)
  }

  protected admit(user: SocketUser): void {
    assertNamespaceScope(this.socket.nsp.name as RealtimeNamespace, user)
  }

  protected notify(expiresAt: number): void {
    this.socket.emit('auth:expiring', { expiresAt })
  }

  protected end(message: string, later: boolean): void {
    const { socket } = this
    // straight to this socket, not through the adapter's stream (as a recoverable emit would go): it must leave
    // before the disconnection, and a disconnected socket recovers nothing anyway
    socket.nsp.local.to(socket.id).emit('auth:failed', { message })
    // a refused refresh: after its acknowledgement has left; otherwise at once, so that nothing the client sends
    // after this moment is handled with the rights it no longer has
    if (later) setImmediate(disconnect, socket)
    else socket.disconnect()
  }
}

function disconnect(socket: WatchedSocket): void {
  socket.disconnect()
}

/** What /ws tells its client and how it closes (raw-websocket.ts). */
export interface RawConnection {
  send(message: Record<string, unknown>): void
  close(message: string): void
}

/** A /ws connection's credential: its user and credential are kept here (a raw socket has no `data`). */
class RawWatch extends CredentialWatch {
  #user: SocketUser
  #credential: SocketCredential

  constructor(
    watching: Watching,
    readonly connection: RawConnection,
    user: SocketUser,
    credential: SocketCredential,
  ) {
    super(watching)
    this.#user = user
    this.#credential = credential
  }

  get user(): SocketUser {
    return this.#user
  }
  set user(user: SocketUser) {
    this.#user = user
  }
  get credential(): SocketCredential {
    return this.#credential
  }
  set credential(credential: SocketCredential) {
    this.#credential = credential
  }

  protected admit(): void {
    // /ws needs no scope (contracts' realtimeScopes.rawWebSocket): it echoes its own client's messages, nothing else
  }

  protected notify(expiresAt: number): void {
    this.connection.send({ type: 'auth:expiring', expiresAt })
  }

  protected end(message: string): void {
    this.connection.send({ type: 'auth:failed', message })
    this.connection.close(message)
  }
}

const watches = new WeakMap<object, SocketWatch>()

/** `this` is the socket that disconnected. */
function stopWatching(this: object): void {
  watches.get(this)?.stop()
}

export interface CredentialWatcher {
  /** Times the socket's credential from now on, answers its auth:refresh, and ends it on a revocation or logout. */
  watch(socket: WatchedSocket): void
  /** The same for a /ws connection; `stop` when it closes. */
  watchRaw(connection: RawConnection, user: SocketUser, credential: SocketCredential): CredentialWatch
  /** This instance's sockets of the user in the namespace. */
  socketsOf(userId: string, path: RealtimeNamespace): WatchedSocket[]
  /** stops following the revocations */
  close(): void
}

/** One for the server: its auth:refresh listener, the clock and the indexes are shared by every connection. */
export function credentialWatcher({
  handshake,
  credentials,
  revocations,
  noticeMs,
  log,
}: WatchCredentialOptions): CredentialWatcher {
  const watching: Watching = {
    clock: new WatchClock<CredentialWatch>(),
    noticeMs,
    handshake,
    credentials,
    byUser: new ConnectionIndex(),
    bySession: new ConnectionIndex(),
    log,
  }

  /** A credential issued before the user's revocation in force (one that arrived while it was being verified). */
  const revoked = (watch: CredentialWatch) =>
    (watch.user.principal.issuedAt ?? 0) < revocations.revokedBefore(watch.user.userId)

  const events = new ClientEvents<WatchedSocket>(log, realtimeScopes.session).on(
    'auth:refresh',
    AuthRefresh,
    async (socket, { token }) => {
      // every watched socket has its watch (watch() below made it before it listened)
      const watch = watches.get(socket)!
      // a refusal is rejected with its AppError: the refused ack and `error`, beside auth:failed
      const expiresAt = await watch.refresh(token)
      log.debug({ socketId: socket.id, userId: socket.data.user.userId }, 'realtime token refreshed')
      return { expiresAt }
    },
  )

  const stopRevoked = revocations.onRevoked((revocation) => {
    const ended = watching.byUser
      .of(userKey(revocation.userId))
      .filter((watch) => (watch.user.principal.issuedAt ?? 0) < revocation.revokedBefore)
    for (const watch of ended) watch.fail()
    if (ended.length > 0)
      log.info({ userId: revocation.userId, connections: ended.length }, 'revoked: connections ended')
  })
  const stopEnded = revocations.onSessionEnded(({ sessionHash }) => {
    const ended = watching.bySession.of(sessionHash)
    for (const watch of ended) watch.fail(realtimeMessages.invalidSession)
    if (ended.length > 0)
      log.info({ connections: ended.length }, 'logged out: connections of the session ended')
  })

  return {
    watch(socket) {
      const watch = new SocketWatch(watching, socket)
      watches.set(socket, watch)
      events.attach(socket)
      socket.on('disconnect', stopWatching)
      watch.start()
      if (revoked(watch)) watch.fail()
    },

    watchRaw(connection, user, credential) {
      const watch = new RawWatch(watching, connection, user, credential)
      watch.start()
      if (revoked(watch)) watch.fail()
      return watch
    },

    socketsOf(userId, path) {
      const sockets: WatchedSocket[] = []
      for (const watch of watching.byUser.of(userKey(userId))) {
        if (watch instanceof SocketWatch && watch.socket.nsp.name === path) sockets.push(watch.socket)
      }
      return sockets
    },

    close() {
      stopRevoked()
      stopEnded()
    },
  }
}
